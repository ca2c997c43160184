/**
 * The notification channels' tests: a deploy with `notify` entries run in the test's process (its outcomes told
 * to `told`, as a server's counters hear them), secret files of mode 0600, and a test certificate made by openssl.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { outboundCredentials } from "../../src/config/deploy-secrets.ts";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import type { NotifyTarget } from "../../src/config/schema-notify.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import { type Notified, OutboundCalls } from "../../src/notify/outbound.ts";
import { outboundSinks } from "../../src/notify/sink.ts";
import { tempDir } from "./helpers.ts";

/** Every outcome the calls of the deploys below told their owner. */
export const told: Notified[] = [];
export const calls = new OutboundCalls((outcome) => told.push(outcome));

/** A deploy of `repoPath` that notifies `notify`, its secret files in `cwd`. */
export function deployNotifying(
  repoPath: string,
  notify: NotifyTarget[],
  options: { cwd?: string; runScript?: string; app?: string; secrets?: string[] } = {},
) {
  const cwd = options.cwd ?? tempDir();
  return runDeploy({
    id: crypto.randomUUID(),
    outbound: outboundSinks(calls),
    config: { ...defaultConfig(cwd), repoPath, runScript: options.runScript ?? "false", notify },
    trigger: "webhook",
    cwd,
    app: options.app,
    // As the server builds them (config/deploy-secrets.ts): the channels' secret files join the set.
    secrets: [...(options.secrets ?? []), ...outboundCredentials({ notify }, cwd, {})],
  });
}

/** A secret file of mode 0600 holding `value`; its path. */
export function secretFile(dir: string, name: string, value: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return path;
}

/** A self-signed certificate for 127.0.0.1 and localhost: its key and certificate (PEM), and the certificate's file. */
export function testCertificate(): { key: string; cert: string; certFile: string } {
  const dir = tempDir("service-cert-");
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  return { key: readFileSync(keyFile, "utf8"), cert: readFileSync(certFile, "utf8"), certFile };
}
