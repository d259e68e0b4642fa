import { sql } from "drizzle-orm";
import type { Database } from "../client.ts";

/** Live memories lacking a vector from `model` (`model@dimensions`), across organisations. */
export async function memoriesToEmbed(
  db: Database,
  params: { model: string; limit: number },
): Promise<Array<{ id: string; body: string }>> {
  const rows = await db.execute<{ id: string; body: string }>(
    sql`select * from public.memories_to_embed(${params.model}, ${params.limit}::integer)`,
  );
  return [...rows];
}

/** Stores a backfilled vector; false when the memory was erased or purged meanwhile. */
export async function setMemoryEmbedding(
  db: Database,
  params: { id: string; embedding: number[]; model: string },
): Promise<boolean> {
  const vector = `{${params.embedding.join(",")}}`;
  const [row] = await db.execute<{ stored: boolean }>(
    sql`select public.set_memory_embedding(${params.id}::uuid, ${vector}::real[], ${params.model}) as stored`,
  );
  return row?.stored === true;
}
