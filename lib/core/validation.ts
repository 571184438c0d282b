import { z } from 'zod';

/** A UUID in its 8-4-4-4-12 hex form, either case (ids are stored lower-case). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_PATTERN.test(value);

/** A UUID string, lower-cased: the one zod form every request and import schema uses. */
export const uuidString = (message = 'must be a UUID') =>
  z
    .string()
    .regex(UUID_PATTERN, message)
    .transform((s) => s.toLowerCase());
