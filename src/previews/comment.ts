/**
 * The one comment on a pull request (docs/previews.md "The comment", `previews.comment`): made at the first report,
 * edited in place at each later one; found again, when its id is not known, by the hidden marker in its body, which
 * only the holder of the token could write. Never a second one: when the comments cannot be read, none is made.
 * GitHub and Gitea/Forgejo issue comments, GitLab merge request notes, Bitbucket pull request comments.
 */
import { createHmac } from "node:crypto";
import type { StatusTarget } from "../config/forge.ts";
import { authHeaders } from "../gate/forges.ts";
import type { Next } from "../gate/forge-read.ts";
import type { OutboundRequest } from "../notify/outbound.ts";
import {
  answerJson,
  forgeCall,
  forgeList,
  forgeSend,
  linkNext,
  type Problems,
  problemOf,
  repoPath,
} from "./forge-call.ts";
import { commentBody } from "./comment-body.ts";
import type { PreviewReport } from "./report-types.ts";

type Json = Record<string, unknown>;

/** Where a forge keeps a pull request's comments, and how a comment's body is written and read. */
interface CommentApi {
  list: string;
  next: Next;
  items: (body: unknown) => unknown[];
  create: string;
  edit: (id: string) => string;
  editMethod: "PATCH" | "PUT";
  write: (body: string) => unknown;
  read: (comment: unknown) => string;
}

const asList = (body: unknown) => {
  if (!Array.isArray(body)) throw new Error("no list");
  return body;
};
const bodyOf = (comment: unknown) => {
  const body = comment && typeof comment === "object" ? (comment as Json).body : undefined;
  return typeof body === "string" ? body : "";
};

function apiOf(target: StatusTarget, number: number): CommentApi {
  const { apiUrl, repo } = target;
  switch (target.provider) {
    case "github":
    case "gitea": {
      const issue = `${apiUrl}/repos/${repoPath(repo)}/issues`;
      return {
        list: `${issue}/${number}/comments?${target.provider === "github" ? "per_page=100" : "limit=50"}`,
        next: linkNext,
        items: asList,
        create: `${issue}/${number}/comments`,
        edit: (id) => `${issue}/comments/${encodeURIComponent(id)}`,
        editMethod: "PATCH",
        write: (body) => ({ body }),
        read: bodyOf,
      };
    }
    case "gitlab": {
      const notes = `${apiUrl}/projects/${encodeURIComponent(repo)}/merge_requests/${number}/notes`;
      return {
        list: `${notes}?per_page=100&page=1`,
        next: (url, _body, headers) => {
          const n = headers.get("x-next-page")?.trim() ?? "";
          const current = Number(url.searchParams.get("page"));
          return /^\d+$/.test(n) && Number(n) > current ? `${notes}?per_page=100&page=${n}` : undefined;
        },
        items: asList,
        create: notes,
        edit: (id) => `${notes}/${encodeURIComponent(id)}`,
        editMethod: "PUT",
        write: (body) => ({ body }),
        read: bodyOf,
      };
    }
    case "bitbucket": {
      const comments = `${apiUrl}/repositories/${repoPath(repo)}/pullrequests/${number}/comments`;
      return {
        list: `${comments}?pagelen=100`,
        next: (_url, body) => {
          const next = body && typeof body === "object" ? (body as Json).next : undefined;
          return typeof next === "string" && next ? next : undefined;
        },
        items: (body) => asList(body && typeof body === "object" ? (body as Json).values : undefined),
        create: comments,
        edit: (id) => `${comments}/${encodeURIComponent(id)}`,
        editMethod: "PUT",
        write: (raw) => ({ content: { raw } }),
        read: (comment) => {
          const content = comment && typeof comment === "object" ? (comment as Json).content : undefined;
          const raw = content && typeof content === "object" ? (content as Json).raw : undefined;
          return typeof raw === "string" ? raw : "";
        },
      };
    }
  }
}

/**
 * The marker the comment carries: the app, and a mark made with the token of the repository and pull request,
 * so a comment someone else wrote with the same words is never taken for it.
 */
export function commentMarker(target: StatusTarget, app: string, number: number): string {
  const name = app.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 64);
  const mark = createHmac("sha256", target.token).update(`${target.repo}#${number}:${name}`).digest("hex").slice(0, 16);
  return `<!-- service-preview:${name} ${mark} -->`;
}

const idOfComment = (comment: unknown): string | undefined => {
  const id = comment && typeof comment === "object" ? (comment as Json).id : undefined;
  return typeof id === "number" && Number.isSafeInteger(id)
    ? String(id)
    : typeof id === "string" && id
      ? id
      : undefined;
};

/** Makes or edits the one comment; its id (to keep) when known. A failure is a problem, never a throw. */
export async function keepComment(report: PreviewReport, problems: Problems): Promise<string | undefined> {
  const { target, preview } = report;
  const api = apiOf(target, preview.number);
  const marker = commentMarker(target, preview.app, preview.number);
  const body = `${marker}\n${commentBody(report)}`;
  const request = (url: string, method: OutboundRequest["method"]): OutboundRequest => ({
    method,
    url,
    headers: { ...authHeaders(target), "content-type": "application/json" },
    body: JSON.stringify(api.write(body)),
  });
  const edit = async (id: string) => {
    const answer = await forgeSend(target, request(api.edit(id), api.editMethod));
    if (!answer.ok && answer.status !== 404) problems.push(problemOf(target, "comment edit", answer));
    return answer.status === 404 ? "gone" : "kept";
  };

  // The comment known by its id: edited, unless it was deleted (then looked for, and made again).
  if (preview.commentId && (await edit(preview.commentId)) === "kept") return preview.commentId;
  const listed = await forgeList(target, "comments", api.list, api.next, api.items, problems);
  // Comments that cannot be read may hold it: none is made, rather than a second one.
  if (!listed) return preview.commentId;
  const found = listed.find((comment) => api.read(comment).includes(marker));
  const foundId = found ? idOfComment(found) : undefined;
  if (foundId) {
    await edit(foundId);
    return foundId;
  }
  const created = await forgeCall(target, "comment", request(api.create, "POST"), problems);
  return idOfComment(answerJson(created));
}
