/**
 * A preview's build slot (docs/previews.md "Life cycle"): one of the service's build slots (queue/slots.ts), taken
 * only when no deploy of production waits for one and fewer than `previews.slots` previews build, so production
 * waiting for a slot always gets the next one before any preview.
 */
import { POLL_MS } from "../queue/queue.ts";
import { readSlots, type Slot, takeSlot } from "../queue/slots.ts";

/** The id prefix of a preview's slot ticket: how the holders of previews are told from production's. */
export const PREVIEW_SLOT = "preview:";

/**
 * Resolves with a slot once the preview may build; undefined when `stopped` says to give up while it waits.
 * `building` counts this process's previews building now.
 */
export async function previewSlot(
  cwd: string,
  limit: number,
  previewSlots: number,
  who: { app: string; number: number },
  stopped: () => boolean,
  building: () => number,
): Promise<Slot | undefined> {
  for (;;) {
    if (stopped()) return undefined;
    const use = readSlots(cwd, limit);
    const previews = use.holders.filter((h) => h.id.startsWith(PREVIEW_SLOT)).length;
    const free = limit === 0 || use.inUse < limit;
    if (use.waiting.length === 0 && free && Math.max(previews, building()) < previewSlots) {
      const id = `${PREVIEW_SLOT}${who.app}/pr-${who.number}/${crypto.randomUUID()}`;
      return takeSlot(cwd, limit, { id, app: who.app }, { onWait: () => {}, abort: () => {} });
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS * 5));
  }
}
