/**
 * A real SMTP server on 127.0.0.1 (npm smtp-server) for the email channel's tests: STARTTLS (or TLS from the first
 * byte) with a test certificate, AUTH PLAIN/LOGIN only over TLS, each message kept as received. Stopped after the run.
 */
import { SMTPServer } from "smtp-server";
import { afterRun } from "./after-run.ts";

export interface Received {
  raw: string;
  /** The connection was TLS when the message was sent. */
  secure: boolean;
  user: string | undefined;
  from: string;
  to: string[];
}

export interface FakeSmtp {
  port: number;
  received: Received[];
  /** AUTH attempts, accepted or not. */
  logins: { user: string; ok: boolean; secure: boolean }[];
}

const servers: SMTPServer[] = [];
afterRun(() => {
  for (const server of servers) server.close();
});

export async function startSmtp(options: {
  key: string;
  cert: string;
  /** TLS from the first byte. */
  implicit?: boolean;
  /** No STARTTLS at all (and AUTH accepted in plain: a client that sends credentials then is caught). */
  plainOnly?: boolean;
  /** The one account it accepts; without it no AUTH is needed. */
  account?: { user: string; password: string };
}): Promise<FakeSmtp> {
  const smtp: FakeSmtp = { port: 0, received: [], logins: [] };
  const server = new SMTPServer({
    secure: options.implicit === true,
    key: options.key,
    cert: options.cert,
    ...(options.plainOnly ? { disabledCommands: ["STARTTLS"] } : {}),
    authOptional: !options.account,
    authMethods: ["PLAIN", "LOGIN"],
    // Credentials over a plain connection only for the server without STARTTLS: it shows whether a client sends them.
    allowInsecureAuth: options.plainOnly === true,
    logger: false,
    onAuth(auth, session, callback) {
      const ok = auth.username === options.account?.user && auth.password === options.account?.password;
      smtp.logins.push({ user: auth.username ?? "", ok, secure: session.secure });
      if (!ok) return callback(Object.assign(new Error("authentication failed"), { responseCode: 535 }));
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        smtp.received.push({
          raw: Buffer.concat(chunks).toString("utf8"),
          secure: session.secure,
          user: session.user as string | undefined,
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
        });
        callback();
      });
    },
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  smtp.port = (server.server.address() as { port: number }).port;
  return smtp;
}
