/** A deploy history to filter: two apps, deploys of today and of three days ago (made under libfaketime). */
import { expect } from "bun:test";
import { existsSync } from "node:fs";
import { makeRepo, runCli, tempDir } from "./helpers.ts";
import { writeServiceYaml } from "./webhook-fixtures.ts";

/** libfaketime (Debian package `faketime`): a process started with it reads a shifted wall clock. */
export const FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
export const hasFaketime = existsSync(FAKETIME_LIB);

/**
 * A multi-app service directory whose history, newest first, is: api failed (now), web ok (now), web ok (three
 * days ago). Returns the service's directory.
 */
export async function twoAppHistory(): Promise<string> {
  const [web, api] = [makeRepo(), makeRepo()];
  const cwd = tempDir("service-apps-");
  writeServiceYaml(cwd, {
    apps: [
      { name: "web", host: "web.example.com", path: "/hook", repoPath: web.clone, runScript: "echo web" },
      { name: "api", host: "api.example.com", path: "/hook", repoPath: api.clone, runScript: "false" },
    ],
  });
  const old = await runCli(["deploy", "--app", "web"], { cwd, env: { LD_PRELOAD: FAKETIME_LIB, FAKETIME: "-3d" } });
  expect(old.code).toBe(0);
  expect((await runCli(["deploy", "--app", "web"], { cwd })).code).toBe(0);
  expect((await runCli(["deploy", "--app", "api"], { cwd })).code).toBe(1);
  return cwd;
}
