/**
 * A deploy's request (docs/deploy-control.md "Requests"): `requestOf` writes what a deploy was asked, `replayedOf`
 * gives it back to the deployer when it is replayed. One is the other's inverse, through the file on the disk.
 */
import { describe, expect, test } from "bun:test";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { replayedOf, requestOf } from "../../src/deploy/request.ts";
import type { DeployOptions } from "../../src/deploy/types.ts";
import { storedRequests, storeRequest } from "../../src/history/requests.ts";
import { tempDir } from "../_support/helpers.ts";

/** Every field a request names, as an entrance gives them to the deployer. */
function asked(cwd: string, trigger: DeployOptions["trigger"]): DeployOptions & { id: string } {
  return {
    id: crypto.randomUUID(),
    app: "web",
    config: { ...defaultConfig(cwd), repoPath: cwd },
    trigger,
    actor: "alice",
    sub: "people|alice",
    cwd,
    target: { commit: "a".repeat(40), deployId: null, ref: "v1.2.0", tag: "v1.2.0" },
    pushed: "b".repeat(40),
    deployment: { id: 7, environment: "production", task: "deploy" },
    event: "push",
    delivery: "delivery-1",
    paths: { matched: ["src/app.ts"] },
    skipGate: true,
    noCarry: true,
  };
}

/** What the request names, back from the file it was written to. */
function throughTheDisk(options: DeployOptions & { id: string }) {
  const cwd = options.cwd;
  expect(storeRequest(cwd, requestOf(options, false))).toBeUndefined();
  const [stored] = storedRequests(cwd);
  return stored!;
}

describe('a request kept and replayed (docs/deploy-control.md "Requests")', () => {
  test("replayedOf gives back every field requestOf kept, under the replay's trigger", () => {
    const options = asked(tempDir("service-request-"), "webhook");
    const replayed = replayedOf(throughTheDisk(options), "catch-up");
    const { id, actor, sub, target, pushed, deployment, event, delivery, paths, skipGate, noCarry } = options;
    expect(replayed).toEqual({
      id,
      trigger: "catch-up",
      actor: actor!,
      sub,
      target,
      pushed,
      deployment,
      event,
      delivery,
      paths,
      skipGate,
      noCarry,
    });
  });

  test("a rollback replayed stays a rollback; a request that named nothing gives back nothing", () => {
    const cwd = tempDir("service-request-");
    const bare: DeployOptions & { id: string } = {
      id: crypto.randomUUID(),
      config: { ...defaultConfig(cwd), repoPath: cwd },
      trigger: "rollback",
      actor: "bob",
      cwd,
    };
    expect(replayedOf(throughTheDisk(bare), "recovered")).toEqual({ id: bare.id, trigger: "rollback", actor: "bob" });
  });
});

describe("requests in the order they were acknowledged", () => {
  test("twenty requests acknowledged within one millisecond are read back in the order they were stored", () => {
    const cwd = tempDir("service-request-");
    const at = new Date().toISOString();
    const ids = Array.from({ length: 20 }, () => crypto.randomUUID());
    for (const id of ids) {
      const options = { ...asked(cwd, "webhook"), id };
      expect(storeRequest(cwd, { ...requestOf(options, false), at })).toBeUndefined();
    }
    expect(storedRequests(cwd).map((request) => request.id)).toEqual(ids);
  });
});
