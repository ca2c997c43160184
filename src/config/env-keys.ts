/**
 * The `SERVICE_*` variables read as a configuration, through the key table of keys.ts (each key's variable, the
 * fields of a key that has a variable each), and the yes/no variables that are not keys.
 */
import { coerce, FIELDS_ENV, KEY_NAMES, KEYS } from "./keys.ts";
import { coerceScalar } from "./scalars.ts";
import { ConfigError, type UserConfig } from "./schema.ts";

/** The fields of such a key the environment sets, as raw text; undefined when it sets none. */
function fieldsFromEnv(env: NodeJS.ProcessEnv, names: Record<string, string>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [field, name] of Object.entries(names)) {
    const value = env[name];
    if (value !== undefined && value !== "") out[field] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The `SERVICE_*` variables as a UserConfig. The only place the environment is read for options. */
export function envConfig(env: NodeJS.ProcessEnv = process.env, errors?: string[]): UserConfig {
  const out: Record<string, unknown> = {};
  for (const key of KEY_NAMES) {
    const { kind, env: name, min } = KEYS[key];
    if (!name) continue;
    // The key's fields have a variable each; together they make one value.
    const fields = FIELDS_ENV[kind as keyof typeof FIELDS_ENV];
    const value = fields ? fieldsFromEnv(env, fields) : env[name];
    if (value === undefined || value === "") continue;
    try {
      out[key] = coerce(kind, value, true, `environment variable ${name}`, min);
    } catch (error) {
      if (!errors || !(error instanceof ConfigError)) throw error;
      errors.push(error.message);
    }
  }
  return out as UserConfig;
}

/** A yes/no `SERVICE_*` variable that is not a config key (unset or empty: false); a value that is neither throws. */
export function envFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name];
  if (value === undefined || value === "") return false;
  return coerceScalar("boolean", value, true, `environment variable ${name}`) as boolean;
}
