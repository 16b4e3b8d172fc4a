import { de } from '../../src/i18n/messages/de.js';
import { en, type Messages } from '../../src/i18n/messages/en.js';
import { fr } from '../../src/i18n/messages/fr.js';

/** Texts that are the same word in English and the other language. */
const SAME: Record<string, ReadonlySet<keyof Messages>> = { de: new Set(['errorDetails']), fr: new Set() };

describe.each([['de', de], ['fr', fr]] as const)('the %s texts', (tag, messages) => {
  const keys = Object.keys(en) as Array<keyof Messages>;

  it('has every text, each translated (none left in English)', () => {
    expect(Object.keys(messages).sort()).toEqual([...keys].sort());
    for (const key of keys) {
      const ours = messages[key];
      const english = en[key];
      expect(typeof ours).toBe(typeof english);
      const sample = (text: Messages[keyof Messages]): string => (typeof text === 'function' ? (text as (value: never) => string)(7 as never) : text);
      if (!SAME[tag]!.has(key)) expect(`${key}: ${sample(ours)}`).not.toBe(`${key}: ${sample(english)}`);
    }
  });

  it('puts the values it is given in the sentence', () => {
    expect(messages.consentHeading('Team Web')).toContain('Team Web');
    expect(messages.signInToProduct('Acme HR')).toContain('Acme HR');
    expect(messages.tooManyFailedSignIns(1)).toMatch(/1 (Sekunde|seconde)\b/);
    expect(messages.tooManyFailedSignIns(30)).toMatch(/30 (Sekunden|secondes)/);
    expect(messages.tooManyFailedSignIns(600)).toContain('10 Minuten'.replace('Minuten', tag === 'de' ? 'Minuten' : 'minutes'));
    expect(messages.requestTooLarge(4096)).toContain('4096');
  });
});
