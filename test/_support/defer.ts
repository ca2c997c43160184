/**
 * Cleanup that runs when a block ends, however it ends: `using _cleanup = defer(() => …)` in place of a
 * try/finally around the whole test. Declared after a disposable server, it runs before the server stops.
 */
export function defer(cleanup: () => void): Disposable {
  return { [Symbol.dispose]: cleanup };
}
