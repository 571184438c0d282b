/** Types of extract-worker.mjs (plain JavaScript so every runtime can load it as a worker). */
export type WorkerLimits = { maxInflatedBytes: number; maxEntries: number; maxTextChars: number };
export type WorkerResult = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'invalid'; detail: string };
export default function extract(task: { bytes: Uint8Array; contentType: string; limits: WorkerLimits }): Promise<WorkerResult>;
export function extractMarkdown(bytes: Uint8Array, contentType: string, limits: WorkerLimits): Promise<string>;
export function htmlToMarkdown(html: string, maxChars?: number): string;
export function csvToMarkdown(text: string, maxChars?: number): string;
export function checkZip(buffer: Buffer, limits: WorkerLimits): Promise<void>;
