'use client';
import { useActionState, useState } from 'react';
import type { HandoffFormValues } from '@/lib/dashboard/handoff-settings';
import { FormResult } from '../_components/FormResult';
import { submitKeepingInput } from '../_components/submit';
import { saveHandoffSettingsAction } from './handoff-actions';

/** The week's grid: day, opens, closes in a row; on a phone the day above its two times. */
const HOURS_CSS = `
.handoff-hours { display: grid; grid-template-columns: minmax(7rem, 9rem) minmax(8rem, 10rem) minmax(8rem, 10rem); gap: .4rem .6rem; align-items: center; }
.handoff-hours .hh-head { font-size: .8rem; }
.handoff-hours .hh-day { margin: 0; font-weight: 500; }
.handoff-hours input[type=time] { padding: .45rem .4rem; border: 1px solid #c9cedc; border-radius: 8px; font: inherit; background: #fff; width: 100%; min-width: 0; }
.handoff-hours input.hh-closed { opacity: .55; }
@media (max-width: 640px) {
  .handoff-hours { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: .3rem .5rem; }
  .handoff-hours .hh-corner { display: none; }
  .handoff-hours .hh-day { grid-column: 1 / -1; margin-top: .35rem; }
}
`;

/** Controlled fields: a refused save keeps what was typed. */
export function HandoffForm({ initial, weekdays, maxAwayText }: { initial: HandoffFormValues; weekdays: string[]; maxAwayText: number }) {
  const [state, action, pending] = useActionState(saveHandoffSettingsAction, null);
  const [v, setV] = useState(initial);
  const setDay = (i: number, patch: Partial<HandoffFormValues['days'][number]>) =>
    setV((s) => ({ ...s, days: s.days.map((d, j) => (j === i ? { ...d, ...patch } : d)) }));
  return (
    <section className="panel" aria-labelledby="handoff-heading">
      <h2 id="handoff-heading" style={{ marginTop: 0 }}>
        Handoff
      </h2>
      <p className="muted">
        Visitors can ask to talk to a person; the conversation then waits in the <a href="/inbox">inbox</a>. Outside office hours, or when no member is online,
        visitors see the away text and can leave their email address instead.
      </p>
      <form onSubmit={submitKeepingInput(action)}>
        <div className="field">
          <label>
            <input name="enabled" type="checkbox" checked={v.enabled} onChange={(e) => setV({ ...v, enabled: e.target.checked })} /> Visitors can ask for a
            person
          </label>
        </div>
        <div className="field">
          <label htmlFor="handoff-tz">Time zone</label>
          <input
            id="handoff-tz"
            name="timeZone"
            type="text"
            maxLength={100}
            value={v.timeZone}
            onChange={(e) => setV({ ...v, timeZone: e.target.value })}
            placeholder="UTC"
            aria-describedby="handoff-tz-hint"
            style={{ maxWidth: '20rem' }}
          />
          <p id="handoff-tz-hint" className="muted" style={{ margin: '.25rem 0 0' }}>
            An IANA time zone name, such as Europe/Berlin or America/New_York. Office hours are in this zone.
          </p>
        </div>
        <fieldset className="field" style={{ border: 0, padding: 0, margin: '0 0 1rem', minWidth: 0 }}>
          <legend style={{ fontWeight: 600, fontSize: '.9rem', marginBottom: '.3rem', padding: 0 }}>Office hours</legend>
          <p className="muted" style={{ margin: '0 0 .5rem' }}>
            Untick a day to close it. A day that closes at midnight (00:00) is open until the end of the day; opening and closing at midnight is all day.
          </p>
          <style>{HOURS_CSS}</style>
          <div className="handoff-hours">
            <span aria-hidden="true" className="hh-corner" />
            <span aria-hidden="true" className="muted hh-head">
              Opens
            </span>
            <span aria-hidden="true" className="muted hh-head">
              Closes
            </span>
            {weekdays.map((day, i) => {
              const d = v.days[i]!;
              return (
                <div key={day} style={{ display: 'contents' }}>
                  <label className="hh-day">
                    <input name={`open-${i}`} type="checkbox" checked={d.open} onChange={(e) => setDay(i, { open: e.target.checked })} /> {day}
                  </label>
                  {(['opens', 'closes'] as const).map((edge) => (
                    <input
                      key={edge}
                      name={`${edge}-${i}`}
                      type="time"
                      aria-label={`${day} ${edge}`}
                      value={d[edge]}
                      onChange={(e) => setDay(i, { [edge]: e.target.value })}
                      className={d.open ? undefined : 'hh-closed'}
                    />
                  ))}
                </div>
              );
            })}
          </div>
        </fieldset>
        <div className="field">
          <label htmlFor="handoff-away">Away text</label>
          <textarea
            id="handoff-away"
            name="awayText"
            rows={2}
            maxLength={maxAwayText}
            value={v.awayText}
            onChange={(e) => setV({ ...v, awayText: e.target.value })}
            placeholder="We're away right now. Leave your email and we'll reply there."
            style={{ width: '100%' }}
          />
          <p className="muted" style={{ margin: '.25rem 0 0' }}>
            Shown to visitors who ask for a person while nobody is there.
          </p>
        </div>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Saving…' : 'Save handoff settings'}
        </button>
      </form>
      <FormResult state={state} saved="Handoff settings saved." style={{ marginTop: '1rem' }} />
    </section>
  );
}
