import { statSync } from "node:fs";
import path from "node:path";

/** A user as the kernel checks file access: its uid and its (only) group; loopd drops the others (`setpriv --clear-groups`). */
export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * Whether `runAs` can reach `place`: every folder above it searchable by
 * that user (owner, group or other bits, as the kernel reads them). What it
 * cannot reach is hidden already; a sandbox that tried to cover it would
 * fail to start (bubblewrap, as that user, cannot make its mount point).
 */
export function reachableBy(place: string, { uid, gid }: RunAs): boolean {
  for (let dir = path.dirname(place); ; dir = path.dirname(dir)) {
    let stat;
    try {
      stat = statSync(dir);
    } catch {
      return false;
    }
    const bit = stat.uid === uid ? 0o100 : stat.gid === gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

/** Whether `place` is a folder, a file (or anything else that is not a folder), or not there. */
export function kindOfPlace(place: string): "dir" | "file" | null {
  try {
    return statSync(place).isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
}
