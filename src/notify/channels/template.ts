/**
 * A notification's `template` filled in, and the escapes of each channel: every value comes from the deploy (a
 * commit message, a branch, a person's name are text from outsiders), so each is escaped for where it goes; the
 * template's own text is the operator's and goes as written.
 */
import type { TemplateField } from "../../config/channels.ts";
import { type NotifyPayload, summary } from "../payloads.ts";

/** The values of a template's fields for `payload`; "" for what it does not have. */
export function templateValues(payload: NotifyPayload): Record<TemplateField, string> {
  return {
    app: payload.app ?? "",
    outcome: payload.outcome,
    commit: payload.target?.sha ?? payload.commit.after ?? "",
    commitMessage: payload.target?.subject ?? payload.commit.subject ?? "",
    actor: payload.actor ?? "",
    url: payload.targetUrl ?? "",
    reason: payload.error ?? "",
    duration: payload.durationMs === null ? "" : `${(payload.durationMs / 1000).toFixed(1)} s`,
    tag: payload.tag ?? "",
    // Deploys of previews do not exist yet: the field is there so templates can name it.
    previewUrl: "",
  };
}

/** `template` with each `{{field}}` replaced by its value, escaped by `escape` (fields were checked at load). */
export function fillTemplate(template: string, payload: NotifyPayload, escapeValue: (text: string) => string): string {
  const values = templateValues(payload);
  return template.replace(/\{\{\s*([^{}]*?)\s*\}\}/g, (whole, field: string) =>
    field in values ? escapeValue(values[field as TemplateField]) : whole,
  );
}

/** The first line of the message: the template filled in, or the summary; each escaped by `escape`. */
export function headline(template: string | undefined, payload: NotifyPayload, escapeValue: (text: string) => string) {
  return template === undefined ? escapeValue(summary(payload)) : fillTemplate(template, payload, escapeValue);
}

/** HTML text (Telegram's and Matrix's HTML): the five characters that could start markup or end an attribute. */
export const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Slack reads <…> as links and mentions. */
export const escapeSlack = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** An email header's value: one line, no control characters (a newline would start a header of its own). */
export const oneLine = (text: string) =>
  text
    .replace(/[\u0000-\u001f\u007f\u0080-\u009f\u2028\u2029]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();

/** As written: the channel takes text (a JSON string, a plain-text body). */
export const asText = (text: string) => text;
