/**
 * Debian's nginx for the tests and the benchmark, run as a plain process with everything under a prefix (no
 * /etc, /var or root needed), and free loopback ports for it. Free of test-runner hooks: the benchmark uses it.
 */
import { existsSync } from "node:fs";
import { createServer } from "node:net";

/** nginx's executable, or undefined where it is not installed. */
export const nginxPath =
  Bun.which("nginx") ?? ["/usr/sbin/nginx", "/sbin/nginx"].find((path) => existsSync(path)) ?? undefined;

/** A port free on 127.0.0.1 now (the OS's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A whole nginx.conf around the server blocks in `site`, everything under `prefix`, in the foreground. */
export function nginxMain(prefix: string, site: string): string {
  const user = process.getuid?.() === 0 ? "user root;\n" : "";
  return `${user}daemon off;
master_process off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path ${prefix}/body;
    proxy_temp_path ${prefix}/proxy;
    fastcgi_temp_path ${prefix}/fastcgi;
    uwsgi_temp_path ${prefix}/uwsgi;
    scgi_temp_path ${prefix}/scgi;
    include ${site};
}
`;
}
