import { getEnv } from '../env';
import { uploadLimits } from '../uploads/service';
import { MAX_QUESTION_CHARS, PROTOCOL_VERSION } from './protocol';

/** What the widget reads at load (`GET /api/widget/config`): the protocol and the limits it must respect. */
export function widgetConfig() {
  return {
    protocol: PROTOCOL_VERSION,
    limits: { ...uploadLimits(), question_max_chars: MAX_QUESTION_CHARS, events_per_10s: getEnv().SOCKET_EVENTS_PER_10S },
  };
}
