/**
 * The deploy's environment, the one of git, the run script and the health check: the service's own without
 * its secrets, then the app's variables (`env`, `envFile`: docs/security.md "The deploy's environment"), then
 * the deploy's context (SERVICE_DEPLOY_ID, SERVICE_COMMIT…), which nothing overrides.
 */
export function scriptEnv(
  env: NodeJS.ProcessEnv,
  context: Record<string, string>,
  variables: Record<string, string> = {},
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env, ...variables, ...context };
  delete out.SERVICE_SECRET;
  delete out.SERVICE_ADMIN_TOKEN;
  delete out.SERVICE_STATUS_TOKEN;
  return out;
}
