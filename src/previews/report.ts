/**
 * Telling the pull request about its preview (docs/previews.md "On the pull request"): the forge's deployment or
 * commit status, and with `previews.comment` the one comment kept current. A failure is said, never thrown: a
 * preview never fails because its forge did not answer.
 */
import { shown } from "../system/shown.ts";
import { keepComment } from "./comment.ts";
import { type Problems, redactToken } from "./forge-call.ts";
import { reportGithub } from "./report-github.ts";
import { reportGitlab } from "./report-gitlab.ts";
import { reportStatus } from "./report-status.ts";
import type { PreviewReport, PreviewReported } from "./report-types.ts";

export type { PreviewPhase, PreviewReport, PreviewReported } from "./report-types.ts";

export async function reportPreview(report: PreviewReport): Promise<PreviewReported> {
  const problems: Problems = [];
  const keep: PreviewReported["keep"] = {};
  try {
    switch (report.target.provider) {
      case "github":
        Object.assign(keep, await reportGithub(report, problems));
        break;
      case "gitlab":
        Object.assign(keep, await reportGitlab(report, problems));
        break;
      case "gitea":
      case "bitbucket":
        await reportStatus(report, problems);
        break;
    }
  } catch (error) {
    problems.push(`preview report: ${shown(String(error)).slice(0, 200)}`);
  }
  if (report.settings.comment) {
    try {
      const id = await keepComment(report, problems);
      if (id !== undefined && id !== report.preview.commentId) keep.commentId = id;
    } catch (error) {
      problems.push(`preview comment: ${shown(String(error)).slice(0, 200)}`);
    }
  }
  return { keep, problems: problems.map((problem) => redactToken(problem, report.target.token)) };
}
