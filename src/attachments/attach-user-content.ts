import type { UserInputBlock } from "../core/attachment-input.js";
import { attachedBlockOf, type UserBlock } from "../core/messages.js";
import type { Store } from "../store/store.js";
import { checkUserContent, type AttachmentLimits } from "./check-user-content.js";

/**
 * A user message's blocks as they are saved: every attachment checked
 * first (a 400 leaves nothing behind), then each stored once per
 * conversation and referred to by its id.
 */
export async function attachUserContent(
  { store, limits }: { store: Pick<Store, "attachments">; limits: AttachmentLimits },
  {
    tenant,
    conversationId,
    blocks,
    fieldOf,
  }: {
    tenant: string;
    conversationId: string;
    blocks: readonly UserInputBlock[];
    /** The request's field a block's fault is named by. @default `body.content[i]` */
    fieldOf?: ((index: number) => string) | undefined;
  },
): Promise<UserBlock[]> {
  const checked = await checkUserContent(blocks, { ...limits, fieldOf });
  const saved: UserBlock[] = [];
  for (const block of checked) {
    if (!("data" in block)) {
      saved.push(block);
      continue;
    }
    const { data, sha256, mediaType, width, height, title } = block;
    const row = await store.attachments.save({
      tenantId: tenant,
      conversationId,
      sha256,
      mediaType,
      width,
      height,
      data,
    });
    saved.push(attachedBlockOf(row, { kind: block.type, title }));
  }
  return saved;
}
