import { checkMediaBytes, isMediaFault } from "./check-media-bytes.js";
import { attachedBlockOf, IMAGE_MEDIA_TYPES, type ImageBlock } from "../core/messages.js";
import type { Store } from "../store/store.js";
import type { ImageKeeper } from "../tools/define-tool.js";

const IMAGE_TYPES: readonly string[] = IMAGE_MEDIA_TYPES;

/**
 * What keeps the images a run's tools return: each checked as a user's
 * image is (`checkMediaBytes`), stored once per conversation by its SHA-256,
 * and its bytes added to the run's `attachments`, so the run's next model
 * call sends them. At most `maxCount` of one result are kept (as a user
 * message's attachments are capped), the first good ones; a bad image, or
 * one past the cap, is refused with the reason, which the result's text
 * tells the model.
 */
export function toolImageKeeper({
  store,
  limits: { maxBytes, maxCount },
  tenant,
  conversationId,
  attachments,
}: {
  store: Pick<Store, "attachments">;
  limits: { maxBytes: number; maxCount: number };
  tenant: string;
  conversationId: string;
  /** The run's attachment bytes by id, as its model calls read them. */
  attachments: Map<string, string>;
}): ImageKeeper {
  return async (images) => {
    const kept: (ImageBlock | { refused: string })[] = [];
    let count = 0;
    for (const { mediaType, data } of images) {
      if (count >= maxCount) {
        kept.push({ refused: `a result may hold at most ${maxCount} images (MAX_ATTACHMENTS_PER_MESSAGE)` });
        continue;
      }
      if (!IMAGE_TYPES.includes(mediaType)) {
        kept.push({ refused: `${mediaType} is not an image type loopd keeps (${IMAGE_TYPES.join(", ")})` });
        continue;
      }
      const checked = await checkMediaBytes({ kind: "image", mediaType, data, maxBytes });
      if (isMediaFault(checked)) {
        kept.push({ refused: `it ${checked.fault}` });
        continue;
      }
      const row = await store.attachments.save({
        tenantId: tenant,
        conversationId,
        sha256: checked.sha256,
        mediaType,
        width: checked.width,
        height: checked.height,
        data: checked.data,
      });
      // As the database gives the bytes back (canonical base64): a trace's rebuild of the next call sends the same.
      attachments.set(row.id, checked.data.toString("base64"));
      kept.push(attachedBlockOf(row, { kind: "image" }) as ImageBlock);
      count++;
    }
    return kept;
  };
}
