import { consola } from "consola";

/**
 * Runs a command body so that a failure reaches the user as one clear message and exit code 1, never as a
 * stack trace.
 */
export async function guard(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    consola.error((error as Error).message ?? String(error));
    process.exit(1);
  }
}
