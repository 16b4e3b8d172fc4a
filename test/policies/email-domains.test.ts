import { domainOfEmail, emailDomainProblem, normalizeDomain } from '../../policies/email-domains.js';

/** The email domains a connection owns (policies/email-domains.ts): their form, and which a tenant may claim. */
describe('email domains (policies/email-domains.ts)', () => {
  it.each<[string, string | undefined]>([
    ['Example.COM', 'example.com'],
    ['  example.com  ', 'example.com'],
    ['example.com.', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['', undefined],
    ['   ', undefined],
    ['example.com/path', undefined],
    ['example.com:443', undefined],
    ['user@example.com', undefined],
    ['example.com?x', undefined],
    ['example.com#x', undefined],
    ['exa mple.com', undefined],
    ['[::1]', undefined],
    ['example\\.com', undefined],
    ['exa%mple.com', undefined],
  ])('normalizes %j to %j', (domain, expected) => {
    expect(normalizeDomain(domain)).toBe(expected);
  });

  it.each<[unknown, string | undefined]>([
    ['ada@Example.com', 'example.com'],
    ['a@example.com', 'example.com'],
    ['"a@b"@example.com', 'example.com'],
    [`${'a'.repeat(308)}@example.com`, 'example.com'],
    [`${'a'.repeat(309)}@example.com`, undefined],
    ['@example.com', undefined],
    ['ada@', undefined],
    ['ada', undefined],
    ['ada@exa mple.com', undefined],
    [42, undefined],
    [undefined, undefined],
  ])('the domain of %j is %j', (email, expected) => {
    expect(domainOfEmail(email)).toBe(expected);
  });

  it.each<[string, 'operator' | 'tenant', string | undefined]>([
    ['example.com', 'tenant', undefined],
    ['Sub.Example.COM.', 'tenant', undefined],
    ['a-b.example', 'tenant', undefined],
    ['xn--bcher-kva.example', 'tenant', undefined],
    ['', 'operator', 'must be a domain name (example.com)'],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, 'operator', undefined],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`, 'operator', 'must be a domain name (example.com)'],
    ['192.0.2.1', 'operator', 'must be a domain name, not an IP address'],
    ['localhost', 'operator', 'must have at least two labels (example.com)'],
    ['-a.example', 'operator', 'must be a domain name (letters, digits, hyphens)'],
    ['a-.example', 'operator', 'must be a domain name (letters, digits, hyphens)'],
    ['a_b.example', 'operator', 'must be a domain name (letters, digits, hyphens)'],
    ['example.co_', 'operator', 'must be a domain name (letters, digits, hyphens)'],
    ['example.a', 'operator', undefined],
    [`${'a'.repeat(64)}.example`, 'operator', 'must be a domain name (letters, digits, hyphens)'],
    ['example.', 'operator', 'must have at least two labels (example.com)'],
    // The operator may name a private or shared domain; a tenant may not.
    ['corp.internal', 'operator', undefined],
    ['corp.internal', 'tenant', 'must be a public domain: .internal names are special-use or private'],
    ['gmail.com', 'operator', undefined],
    ['gmail.com', 'tenant', "is a mailbox provider's shared domain: it belongs to no organisation"],
    ['GMail.com', 'tenant', "is a mailbox provider's shared domain: it belongs to no organisation"],
    ['163.com', 'tenant', "is a mailbox provider's shared domain: it belongs to no organisation"],
    ['mail.gmail.com', 'tenant', undefined],
    ['127.0.0.1.nip.io', 'tenant', 'must be a public domain, not a name that spells an IP address'],
  ])('%j named by the %s: %j', (domain, author, problem) => {
    expect(emailDomainProblem(domain, author)).toBe(problem);
  });
});

describe('the shared mailbox domains no tenant may claim', () => {
  // Every one of them: a tenant that claimed one would receive the sign-ins of all its users.
  it.each([
    'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'ymail.com',
    'icloud.com', 'me.com', 'mac.com', 'aol.com', 'proton.me', 'protonmail.com', 'gmx.com', 'gmx.net', 'gmx.de',
    'web.de', 'mail.com', 'yandex.com', 'yandex.ru', 'zoho.com', 'fastmail.com', 'hey.com', 'orange.fr', 'free.fr',
    'laposte.net', 't-online.de', 'qq.com', '163.com',
  ])('%s', (domain) => {
    expect(emailDomainProblem(domain, 'tenant')).toBe("is a mailbox provider's shared domain: it belongs to no organisation");
    expect(emailDomainProblem(domain, 'operator')).toBeUndefined();
  });
});
