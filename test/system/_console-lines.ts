/**
 * Run as a script (`bun test/system/_console-lines.ts consola|service`): writes the same messages through
 * consola's plain console or through the service's own (src/system/logger.ts), for logger.test.ts to compare.
 */
import { consola } from "consola/basic";
import { serviceConsole } from "../../src/system/logger.ts";

const which = process.argv[2] === "consola" ? consola : serviceConsole;
const error = new Error("the deploy failed", { cause: new Error("git exited 128") });
const tagged = which.withTag("service");
tagged.info("listening on http://localhost:8080");
tagged.warn('deploy 3: notification "chat" failed: 500');
which.error("port 8080 is already in use: choose another with SERVICE_PORT or the port key");
which.success("done");
which.log("plain");
tagged.withTag("deploy").info("a %s placeholder kept", "value");
tagged.error(error);
tagged.warn({ key: "value", list: [1, 2] });
for (let i = 0; i < 8; i++) tagged.warn("the same warning");
tagged.info("another line");
