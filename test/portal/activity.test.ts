import { activityFilter, activityQuery } from '../../src/portal/activity.js';
import { PORTAL_TEXT } from '../../src/portal/text.js';

/** The Activity's filter (as typed, refused at its fields) and the audit API's query it becomes. */

describe('the Activity filter', () => {
  it('keeps each value as typed (trimmed); a type the trail does not have is no filter', () => {
    expect(activityFilter({ type: ' client_configuration.created ', since: '2026-01-02', until: '' }, PORTAL_TEXT))
      .toEqual({ filter: { type: 'client_configuration.created', since: '2026-01-02', until: '' }, errors: new Map() });
    expect(activityFilter({ type: 'nothing.happened' }, PORTAL_TEXT).filter.type).toBe('');
    // A value given twice is no value.
    expect(activityFilter({ since: ['2026-01-02', '2026-01-03'] }, PORTAL_TEXT).filter.since).toBe('');
  });

  it.each([
    ['since', '2026-13-40', 'activity-since', PORTAL_TEXT.activity.badDate(PORTAL_TEXT.activity.since)],
    ['since', '2026-02-30', 'activity-since', PORTAL_TEXT.activity.badDate(PORTAL_TEXT.activity.since)],
    ['until', 'yesterday', 'activity-until', PORTAL_TEXT.activity.badDate(PORTAL_TEXT.activity.until)],
    ['until', '2026-1-2', 'activity-until', PORTAL_TEXT.activity.badDate(PORTAL_TEXT.activity.until)],
  ])('refuses %s=%s at its field', (name, value, field, message) => {
    expect([...activityFilter({ [name]: value }, PORTAL_TEXT).errors]).toEqual([[field, message]]);
  });

  it('refuses a range that ends before it starts, at its end', () => {
    expect([...activityFilter({ since: '2026-01-03', until: '2026-01-02' }, PORTAL_TEXT).errors]).toEqual([['activity-until', PORTAL_TEXT.activity.badRange]]);
    expect(activityFilter({ since: '2026-01-02', until: '2026-01-02' }, PORTAL_TEXT).errors.size).toBe(0);
  });

  it('asks the audit API for whole UTC days, 50 events, and passes on only a cursor of the trail', () => {
    const cursor = `${'a'.repeat(20)}.${'B'.repeat(22)}`;
    expect(Object.fromEntries(activityQuery({ type: 'consent.revoked', since: '2026-01-02', until: '2026-01-03' }, cursor))).toEqual({
      limit: '50', type: 'consent.revoked', since: '2026-01-02T00:00:00.000Z', until: '2026-01-03T23:59:59.999Z', cursor,
    });
    expect(Object.fromEntries(activityQuery({ type: '', since: '', until: '' }, '0-0'))).toEqual({ limit: '50' });
    expect(Object.fromEntries(activityQuery({ type: '', since: '', until: '' }, ['a', 'b']))).toEqual({ limit: '50' });
  });
});
