import { z } from 'zod';

/** Retention (docs/contracts.md §18): whole days after the last message, 1–3650, or null (off). */
export const RetentionDays = z.int({ error: 'must be a whole number of days from 1 to 3650' }).min(1).max(3650).nullable();
export const RetentionInput = z.object({ days: RetentionDays });
export type Retention = z.infer<typeof RetentionInput>;

/** A visitor named by email or by the widget's visitor id (docs/contracts.md §18). */
export const VisitorInput = z.union([
  z.object({ email: z.email({ error: 'must be an email address' }).max(320) }),
  z.object({ visitorId: z.string().trim().min(1, { error: 'must not be empty' }).max(200) }),
]);
export type VisitorInput = z.infer<typeof VisitorInput>;

/** What an erasure removed: `{"conversations", "responses", "uploads"}`. */
export type ErasureResult = { conversations: number; responses: number; uploads: number };
