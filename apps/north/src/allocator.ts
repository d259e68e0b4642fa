/**
 * How the HTTP server's process should run its allocator (decision 046). Bun's mimalloc gives
 * a page of freed memory back to the system 10 ms after it empties (`madvise`), and the server's
 * steady churn of requests empties and refills pages all the time: each is faulted back in and
 * zeroed by the kernel, 6–16% of the server's CPU per read. Kept instead, a page is reused as it
 * is; the process holds what it needed at its busiest (15 MB more on a profile read at full rate).
 * mimalloc reads the setting once, before any JavaScript runs, so it goes in the environment of
 * the command that starts the server: `bun run start`, `bun run north` and `bun run bench` set it.
 */
export const ALLOCATOR_SETTING = "MIMALLOC_PURGE_DELAY";

/** Never purge: freed pages stay with the process for the next request. */
export const ALLOCATOR_KEEPS_PAGES = "-1";

/** Whether the setting's value (the configuration's `MIMALLOC_PURGE_DELAY`) keeps pages. */
export const allocatorKeepsPages = (value: string | undefined): boolean =>
  value === ALLOCATOR_KEEPS_PAGES;
