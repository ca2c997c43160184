import { consola } from "consola";

/**
 * SPEC item 8: on Linux, an interactive start asks about HTTPS unless SERVICE_SKIP_HTTPS_PROMPT=1. Interactive
 * means a terminal on both sides: with stdout sent to a file (`service > service.log` typed at a terminal) the
 * question would land in the file and the server would wait for an answer nobody can see.
 */
export function shouldAskAboutHttps(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    process.platform === "linux" && process.stdin.isTTY === true && process.stdout.isTTY === true && env.SERVICE_SKIP_HTTPS_PROMPT !== "1"
  );
}

/** How to put a TLS reverse proxy in front of the service on `port`. */
export function reverseProxyHowTo(port: number): string {
  return [
    "A public Git host needs an HTTPS URL. Put a TLS reverse proxy in front of this service, for example:",
    "",
    "  Caddy (automatic certificates), /etc/caddy/Caddyfile:",
    "    deploy.example.com {",
    `      reverse_proxy 127.0.0.1:${port} {`,
    "        flush_interval -1",
    "      }",
    "    }",
    "",
    "  nginx, inside a server block with your certificate:",
    "    location / {",
    `      proxy_pass http://127.0.0.1:${port};`,
    "      proxy_buffering off;",
    "      proxy_read_timeout 3600s;",
    "      proxy_set_header Host $host;",
    "    }",
    "",
    "Then set hostname: 127.0.0.1 so the service only listens locally. Skip this question with SERVICE_SKIP_HTTPS_PROMPT=1.",
  ].join("\n");
}

/** Asks the HTTPS question; a "yes" prints the reverse-proxy setup. */
export async function askAboutHttps(port: number): Promise<void> {
  const answer = await consola.prompt("Set up HTTPS (a TLS reverse proxy in front of this service)?", {
    type: "confirm",
    initial: false,
    cancel: "default",
  });
  if (answer === true) process.stdout.write(`${reverseProxyHowTo(port)}\n\n`);
}
