import pino from 'pino';
import { getEnv } from '../env';
import { processSingleton } from './process';

/**
 * The service's log. `LOG_FORMAT=json`: pino, one JSON object per line on stdout with `req_id`
 * where a request is involved (what a log pipeline ingests). Otherwise plain text lines on the
 * console, as before. Both take (fields, message).
 */
export type LogFields = Record<string, unknown> & { req_id?: string; err?: unknown };
export type Logger = {
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
};

function textLogger(): Logger {
  const line = (fields: LogFields, message: string) => {
    const { req_id: id, err, ...rest } = fields;
    const extra = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    return [`${id ? `[${id}] ` : ''}${message}${extra ? ` ${extra}` : ''}`, ...(err === undefined ? [] : [err])];
  };
  return {
    info: (f, m) => console.log(...line(f, m)),
    warn: (f, m) => console.warn(...line(f, m)),
    error: (f, m) => console.error(...line(f, m)),
  };
}

function jsonLogger(): Logger {
  const p = pino({ base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, serializers: { err: pino.stdSerializers.err } });
  return {
    info: (f, m) => p.info(f, m),
    warn: (f, m) => p.warn(f, m),
    error: (f, m) => p.error(f, m),
  };
}

export function getLogger(): Logger {
  return processSingleton('svc.logger', (): Logger => (getEnv().LOG_FORMAT === 'json' ? jsonLogger() : textLogger()));
}
