#!/usr/bin/env bun
import { defineCommand, runMain } from "citty";
import pkg from "../package.json" with { type: "json" };
import { deployCommand } from "./commands/deploy.ts";
import { serveCommand } from "./commands/serve.ts";

export const main = defineCommand({
  meta: { name: "service", version: pkg.version, description: pkg.description },
  subCommands: { serve: serveCommand, deploy: deployCommand },
  default: "serve",
});

if (import.meta.main) await runMain(main);
