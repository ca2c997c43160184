import { readJson, waitFor } from "./helpers.ts";

/** The record's outbound outcomes (commit statuses, notifications) once `count` of them are in it. */
export async function outcomes(jsonPath: string, count: number): Promise<any[]> {
  return waitFor(() => {
    const list = readJson(jsonPath).outbound ?? [];
    return list.length >= count ? list : undefined;
  }, `${count} outbound outcomes in ${jsonPath}`);
}
