/** The environment of git and the run script: the service's own, without secrets, with the deploy context. */
export function scriptEnv(env: NodeJS.ProcessEnv, context: Record<string, string>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env, ...context };
  delete out.SERVICE_SECRET;
  delete out.SERVICE_ADMIN_TOKEN;
  delete out.SERVICE_STATUS_TOKEN;
  return out;
}
