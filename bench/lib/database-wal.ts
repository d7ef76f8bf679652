import pg from "pg";

export interface DatabaseWal {
  /** Where the window starts: the server's WAL insert position now. */
  mark(): Promise<string>;
  /**
   * WAL bytes written since `lsn` for this database alone: the records that
   * change one of its relations (full-page images included), and the commit
   * records of the transactions that wrote them. Other databases' records
   * (other work on a shared server) are left out; so is what belongs to no
   * database (checkpoints, the shared catalogs), which is small.
   */
  bytesSince(lsn: string): Promise<{ bytes: number; serverBytes: number }>;
  close(): Promise<void>;
}

/**
 * The WAL one database's work writes, read back with pg_walinspect (in
 * contrib since Postgres 15; superuser), which it installs in that database.
 * A shared server's WAL position moves with everyone's work; this reads the
 * records themselves and keeps the database's own. Null where the extension
 * is not available (older Postgres, a managed server without it). While it
 * is open the server keeps its WAL (a temporary replication slot): close it
 * soon.
 */
export async function openDatabaseWal(databaseUrl: string): Promise<DatabaseWal | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => {});
  await client.connect();
  let oid: number;
  try {
    await client.query("create extension if not exists pg_walinspect");
    const { rows } = await client.query<{ oid: number }>(
      "select oid from pg_database where datname = current_database()",
    );
    oid = rows[0]!.oid;
    // The server keeps every WAL segment from here on while this session lives (a temporary slot, reserving at
    // once): a checkpoint of anyone's would otherwise remove segments before the window is read.
    await client.query("select pg_create_physical_replication_slot($1, true, true)", [
      `loopd_bench_wal_${process.pid}_${oid}`,
    ]);
  } catch {
    await client.end();
    return null;
  }
  // A block reference names its relation as tablespace/database/relation.
  const ours = `rel [0-9]+/${oid}/`;
  return {
    async mark() {
      return (await client.query<{ lsn: string }>("select pg_current_wal_insert_lsn() as lsn")).rows[0]!.lsn;
    },
    async bytesSince(lsn) {
      // Up to what is flushed: pg_walinspect reads no further (every commit has been, synchronous_commit being on).
      const { rows: sums } = await client.query<{ bytes: string; server: string }>(
        `with r as (
           select xid, record_length, block_ref from pg_get_wal_records_info($1::pg_lsn, pg_current_wal_flush_lsn())
         ), writers as (
           select distinct xid from r where xid <> '0' and block_ref ~ $2
         )
         select coalesce(sum(record_length) filter (where block_ref ~ $2 or xid in (select xid from writers)), 0) as bytes,
                coalesce(sum(record_length), 0) as server
         from r`,
        [lsn, ours],
      );
      return { bytes: Number(sums[0]!.bytes), serverBytes: Number(sums[0]!.server) };
    },
    close: () => client.end(),
  };
}
