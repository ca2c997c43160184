/**
 * The webhook port's one endpoint, as the README's "HTTP" section says: route (host + path), refuse what is
 * too large, authenticate (a plain secret on the headers; a signature over a body read within the shared
 * budget), skip a filtered delivery or a paused app, then queue the deploy and answer with its stream, its JSON
 * result or an acknowledgement.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { requestHost, routeRequest, type RouteTable } from "../config/routes.ts";
import { acknowledgement, GONE, NOT_FOUND, queueFull, SHUTTING_DOWN, tooLarge } from "./answers.ts";
import { ByteBudget, declaredLength, UNAUTHENTICATED_BODY_BUDGET_BYTES } from "./body.ts";
import type { ResolvedConfig } from "../config/schema-resolved.ts";
import type { Deployer } from "../deploy/deployer.ts";
import type { DeployEvent, DeployResult, DeploySink } from "../types.ts";
import type { LatestDeploys } from "../queue/latest.ts";
import { queueKey } from "../queue/tickets.ts";
import { forgeDelivery, skippedResponse, wholeDeliveryId } from "./forge.ts";
import { branchOfPush, payloadOf, pusherOf } from "./payload.ts";
import type { ConfigReloader } from "../config/reload.ts";
import { requestPath, requestUrl } from "./request-url.ts";
import { pauseOf } from "../queue/pause.ts";
import { jsonResponse } from "./json.ts";
import { frozenResponse, jsonResult, pausedResponse, streamingResponse } from "./response.ts";
import { freezeOf, frozenText } from "../deploy/frozen.ts";
import { keepForCatchUp } from "../deploy/request.ts";
import type { RequestControl } from "../runtime/types.ts";
import type { DeliveryLog, duplicateResponse } from "./dedupe.ts";
import { presentSignatures, verifyRequestSecret } from "./signature.ts";
import { clientAddress, FailureThrottle } from "./throttle.ts";
import type { Logger } from "../system/logger.ts";
import type { TriggerSkip } from "../triggers/types.ts";
import { headMessageOf } from "../triggers/markers.ts";
import { deliveryAsk } from "./delivery.ts";
import { deliveryBody } from "./delivery-body.ts";
import type { PreviewEntrance } from "../previews/door.ts";
import { previewResponse } from "./preview-answer.ts";

/** What the webhook tells the counters (the admin listener's metrics, admin/metrics.ts). */
export interface WebhookCounters {
  webhookRequest(app: string, status: number): void;
  /** A request answered "skipped": it never became a deploy. */
  deployEnded(app: string, outcome: "skipped"): void;
  /** A request refused by a freeze window. */
  frozenRefused(app: string): void;
  /** A push that did not deploy, by why (triggers/types.ts). */
  skippedPush(app: string, reason: TriggerSkip["reason"]): void;
  /** `sink` wrapped so the counters hear the deploy of `app` start and end. */
  observe(app: string, sink: DeploySink | undefined): DeploySink;
}

/** What the webhook endpoint reads and uses of its server. */
export interface WebhookContext {
  cwd: string;
  reloader: ConfigReloader;
  /** The routes of the apps in force for a configuration (the last good list when it became invalid). */
  routes: (config: ResolvedConfig) => RouteTable<ResolvedApp>;
  /** Looks at the secret file of `app` now (a request about to deploy it), whatever the watches said. */
  lookAtSecret: (app: ResolvedApp) => void;
  deployer: Deployer;
  latest: LatestDeploys;
  /** The counters, when something reads them (the admin listener's metrics). */
  metrics?: WebhookCounters;
  draining: () => boolean;
  /** Every secret a deploy's output must not carry. */
  secrets: () => string[];
  /** Keeps a started deploy until it ends (a stop waits for it); `onError` hears a failure inside the service. */
  track: (id: string, result: Promise<DeployResult>, onError?: (error: Error) => void) => void;
  logger: Logger;
  /** The answer of previews to a pull request's delivery, for an app with `previews` (undefined: not theirs). */
  previews?: PreviewEntrance;
}

const truthy = (value: string | null) => value !== null && ["", "1", "true", "yes"].includes(value.toLowerCase());

/** The handler of every request to the webhook port; each answer is counted per app and status (with counters). */
export function webhookHandler(
  context: WebhookContext,
): (request: Request, control: RequestControl) => Response | Promise<Response> {
  const { cwd, reloader, routes, lookAtSecret, deployer, latest, metrics, draining, secrets, track, logger } = context;
  const throttle = new FailureThrottle();
  /** The memory budget of bodies read before their request is authenticated. */
  const unauthenticatedBodies = new ByteBudget(UNAUTHENTICATED_BODY_BUDGET_BYTES);
  /** The delivery ids seen (dedupeDeliveries), loaded the first time an app that turns it on gets a delivery. */
  let dedupe: Promise<{ log: DeliveryLog; answer: typeof duplicateResponse }> | undefined;
  const loadDedupe = () =>
    (dedupe ??= import("./dedupe.ts").then((module) => ({
      log: new module.DeliveryLog(cwd, logger),
      answer: module.duplicateResponse,
    })));
  if (!metrics) return (request, control) => handle(request, control, false);
  /** The app each request was routed to, for its status counter. */
  const routedTo = new WeakMap<Request, string>();
  const count = (request: Request, response: Response) => {
    metrics.webhookRequest(routedTo.get(request) ?? "", response.status);
    return response;
  };
  return (request, control) => {
    const answer = handle(request, control, false, routedTo);
    return answer instanceof Response ? count(request, answer) : answer.then((response) => count(request, response));
  };

  /** A push a trigger rule did not deploy: counted, and kept as the app's last skipped push (`service status`). */
  async function skippedPush(app: ResolvedApp, skip: TriggerSkip): Promise<void> {
    metrics?.skippedPush(app.name ?? "default", skip.reason);
    (await import("../triggers/last-skipped.ts")).rememberSkippedPush(cwd, app.name, skip);
  }

  /**
   * Route, refuse or authenticate. A refusal (404, 401, 413, 429) is answered at once from the configuration as
   * last seen (files watched: LOOK_AGAIN_MS old at most); a request that may deploy (a right secret, or a signature
   * to check against its body) is taken again from the top with the configuration and secret files looked at now,
   * so an edit or a rotated secret applies to it whatever the watches said.
   */
  function handle(
    request: Request,
    control: RequestControl,
    fresh: boolean,
    routedTo?: WeakMap<Request, string>,
  ): Response | Promise<Response> {
    if (request.method !== "POST") return jsonResponse(404, NOT_FOUND);
    if (draining()) return jsonResponse(503, SHUTTING_DOWN, { "retry-after": "30" });
    const current = reloader.current(fresh);
    const path = requestPath(request);
    if (path === undefined) return jsonResponse(404, NOT_FOUND);
    const app = routeRequest(routes(current), path, () => requestHost(request, current.trustProxy));
    if (!app) return jsonResponse(404, NOT_FOUND);
    if (fresh) lookAtSecret(app);
    routedTo?.set(request, app.name ?? "default");
    // The secret is checked before the client's failures are counted: a right one is never slowed.
    if (!app.secret) return refuse(request, control, current);

    // Refused before any work, whatever the credentials: a deploy whose client then gets a broken pipe could not tell.
    if ((declaredLength(request) ?? 0) > app.maxBodyBytes) return jsonResponse(413, tooLarge(app));

    // A signed request is not authenticated until its body is read (below, with the configuration as it is now).
    const signatures = presentSignatures(request.headers);
    const signed = signatures.length > 0;
    if (!signed && !verifyRequestSecret(request.headers, app.secret, undefined, signatures))
      return refuse(request, control, current);
    if (!fresh) return handle(request, control, true, routedTo);
    return authorize(request, control, current, app, signed);
  }

  function refuse(request: Request, control: RequestControl, current: ResolvedConfig): Response {
    return throttle.refuse(clientAddress(request.headers, () => control.remoteAddress(request), current.trustProxy));
  }

  /**
   * The rest for a request with a right secret or a signature: the body (a signature is checked against it as it
   * streams in), the skip rules, then the deploy and its answer.
   */
  async function authorize(
    request: Request,
    control: RequestControl,
    current: ResolvedConfig,
    app: ResolvedApp,
    signed: boolean,
  ): Promise<Response> {
    // The query is parsed only here: refused requests never need it.
    const query = requestUrl(request)?.searchParams ?? new URLSearchParams();
    const read = await deliveryBody(request, app, signed, unauthenticatedBodies);
    if (read instanceof Response) return read;
    if (!read) return refuse(request, control, current);
    const { body } = read;

    const wantsJson = query.get("format") === "json";
    const forge = forgeDelivery(request.headers);
    const { payload, warnings } = payloadOf(body, request.headers, signed);
    const preview = app.previews ? await context.previews?.(app, request.headers, payload) : undefined;
    if (preview) return previewResponse(preview, forge, wantsJson);
    const asked = await deliveryAsk(cwd, app, forge, payload, (skip) => skippedPush(app, skip));
    if (asked instanceof Response) return asked;
    const { skip, target, deployment } = asked;
    const paused = skip ? undefined : pausedResponse(cwd, app.name, wantsJson);
    const freeze = skip || paused ? undefined : freezeOf({ config: app });
    const skipped = skip ? skippedResponse(skip, wantsJson) : (paused ?? frozenResponse(freeze, wantsJson));
    const appName = app.name ?? "default";
    // With the branch filter on, the commit the push names is checked after the pull (verify/pushed.ts).
    const pushedRef = app.branch ? branchOfPush(payload, app.branch) : undefined;
    // What the delivery asks, built once: kept for the catch-up when a pause or a freeze refuses it, or deployed.
    const options = {
      app: app.name,
      config: app,
      trigger: "webhook" as const,
      // Who pushed, from the authenticated body; a request that names nobody (curl) is known by its address.
      actor:
        asked.actor ??
        pusherOf(payload) ??
        `webhook@${clientAddress(request.headers, () => control.remoteAddress(request), current.trustProxy)}`,
      cwd,
      ...(pushedRef && pushedRef.branch === app.branch ? { pushed: pushedRef.commit } : {}),
      ...(target ? { target } : {}),
      ...(deployment ? { deployment } : {}),
      ...forge,
    };
    if (skipped) {
      metrics?.deployEnded(appName, "skipped");
      if (freeze) metrics?.frozenRefused(appName);
      if (paused || freeze) {
        // With catchUp, the request itself is kept: the end of the pause or freeze decides it again (requests/).
        const why = freeze ? frozenText(freeze) : `deploys are paused: ${pauseOf(cwd, app.name)?.reason ?? ""}`;
        const kept = keepForCatchUp(options, why);
        const refused = { app: app.name, cwd, repoPath: app.repoPath, config: app, env: process.env };
        if (deployment) deployer.refusedDeployment({ ...refused, deployment }, why, kept);
      }
      return skipped;
    }
    // paths and skip markers (triggers/): decided only for an app that sets them, after the cheaper answers above.
    // Loaded only then: a plain app's answer runs no git and loads none of it.
    const trigger =
      app.paths?.length || app.skipMarkers
        ? await (await import("../triggers/decide.ts")).decidePush(cwd, app, headMessageOf(payload), { logger })
        : undefined;
    if (trigger?.skip) {
      metrics?.deployEnded(appName, "skipped");
      metrics?.skippedPush(appName, trigger.skip.reason);
      return skippedResponse({ ...forge, message: trigger.skip.text, reason: trigger.skip.text }, wantsJson);
    }
    // The whole id: the one `forge` carries is cut for logs, and two long ids may differ only past the cut.
    const delivery = app.dedupeDeliveries ? wholeDeliveryId(request.headers) : null;
    const deliveries = delivery ? await loadDedupe() : undefined;

    // Bun 1.4.5 closes a connection when a request is pipelined behind one still being answered, and both are
    // lost. That close happens while the read that brought them is parsed: after one turn of the event loop a
    // request on such a connection is aborted, and is refused before it deploys (its client got no byte).
    await new Promise((resolve) => setImmediate(resolve));
    if (request.signal.aborted) return jsonResponse(400, GONE);

    // A delivery id this app already deployed (a forge's retry), unless that deploy never ran its script: from here
    // to `remember` below nothing awaits, so two copies arriving together cannot both pass.
    const duplicate = deliveries?.log.duplicate(appName, delivery!);
    if (deliveries && duplicate) {
      metrics?.deployEnded(appName, "skipped");
      return deliveries.answer(forge, duplicate, wantsJson);
    }

    // An authorized deploy may stay silent for minutes: no idle cut for this request.
    control.noTimeout(request);
    const acknowledge = app.acknowledge || truthy(query.get("ack"));
    const stream = wantsJson || acknowledge ? undefined : streamingResponse(app.heartbeatMs);
    // queuePolicy latest: a deploy waiting for this repository serves this request too (latest.ts).
    const latestKey = app.queuePolicy === "latest" && !target ? `${app.name ?? ""}\0${queueKey(app.repoPath)}` : "";
    const joined = latestKey
      ? latest.join(latestKey, forge.delivery, (event) => stream?.sink(event), options.actor)
      : undefined;
    const id = joined?.id ?? crypto.randomUUID();
    deliveries?.log.remember(appName, delivery!, id);
    let position = joined?.position ?? 0;
    const sink: DeploySink = (event: DeployEvent) => {
      if (event.type === "queued") position = event.position;
      stream?.sink(event);
      latest.forward(id, event);
    };
    let result: Promise<DeployResult>;
    if (joined) result = joined.result;
    else
      try {
        const served = latestKey ? latest.served(forge.delivery) : undefined;
        result = deployer.deploy({
          ...options,
          id,
          ...(trigger?.paths ? { paths: trigger.paths } : {}),
          sink: metrics ? metrics.observe(appName, sink) : sink,
          notices: reloader.problem ? [reloader.problem] : [],
          warnings,
          secrets: secrets(),
          served,
        });
        if (served) latest.offer(latestKey, { id, position, result, served });
      } catch (error) {
        deliveries?.log.forget(appName, delivery!);
        return queueFull(app, error);
      }
    track(id, result, (error) => stream?.fail(`internal error: ${error.message}`));
    // One deploy per connection: a client must not pipeline another request behind a deploy (see above).
    const response = acknowledge
      ? acknowledgement(id, position, app, wantsJson)
      : stream
        ? stream.response
        : await jsonResult(result);
    response.headers.set("connection", "close");
    return response;
  }
}
