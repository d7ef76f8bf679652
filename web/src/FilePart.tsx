import type { FileUIPart } from "ai";
import { useEffect, useState } from "react";

/**
 * A file the user sent: an image shown small, anything else by its name.
 * A stored attachment's URL is loopd's (`/conversations/…/attachments/…`)
 * and needs the key: it is fetched with it and shown from memory. An image
 * by an outside URL is a link (the page loads nothing from elsewhere).
 */
export function FilePart({ part, fetchBlob }: { part: FileUIPart; fetchBlob: (path: string) => Promise<Blob> }) {
  const inline = part.url.startsWith("data:");
  const stored = part.url.startsWith("/");
  const image = part.mediaType.startsWith("image/");
  const [src, setSrc] = useState<string | null>(inline ? part.url : null);
  useEffect(() => {
    if (!image || !stored) return;
    let live = true;
    let objectUrl: string | null = null;
    fetchBlob(part.url)
      .then((blob) => {
        if (!live) return;
        objectUrl = URL.createObjectURL(blob);
        setSrc(objectUrl);
      })
      .catch(() => {});
    return () => {
      live = false;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [part.url]);
  const name = part.filename ?? part.mediaType;
  if (!inline && !stored) {
    return (
      <a className="attachment-chip" href={part.url} target="_blank" rel="noreferrer noopener">
        {name}
      </a>
    );
  }
  if (image)
    return src ? (
      <img className="attachment-image" src={src} alt={part.filename ?? "an image you sent"} />
    ) : (
      <span className="attachment-chip">{name}</span>
    );
  return <span className="attachment-chip">{name}</span>;
}
