import { describe, expect, it } from 'vitest';
import { cnIdValid, ibanValid, luhn, scanPii, type PiiKind } from '../../src/guards/result/pii.js';

const ALL = new Set<PiiKind>(['email', 'phone', 'card', 'iban', 'cn_id']);
const redact = (text: string, kinds: ReadonlySet<PiiKind> = ALL) => scanPii(text, kinds, 'redact');
const kinds = (text: string) => redact(text).findings.map((f) => f.kind);

describe('personal-data guard', () => {
  it('redacts each kind with its typed placeholder', () => {
    const text = 'Mail jane.doe@example.org, call +1 (415) 555-0132, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, 身份证 11010519491231002X.';
    expect(redact(text).text).toBe('Mail [REDACTED:email], call [REDACTED:phone], card [REDACTED:card], IBAN [REDACTED:iban], 身份证 [REDACTED:cn_id].');
    expect(kinds(text)).toEqual(['email', 'phone', 'card', 'iban', 'cn_id']);
  });

  it('only the kinds asked for', () => {
    const r = redact('jane@example.org 4111111111111111', new Set<PiiKind>(['card']));
    expect(r.text).toBe('jane@example.org [REDACTED:card]');
  });

  it('e-mail: not asset names, SSH remotes, URL users or package scopes', () => {
    expect(kinds('li.wei+orders@mail.example.cn')).toEqual(['email']);
    for (const t of ['logo@2x.png', 'git@github.com:acme/api.git', 'postgres://app@db.internal:5432/app', 'npm i @types/node', 'user@localhost', 'a@b']) {
      expect(kinds(t), t).toEqual([]);
    }
  });

  it('phone: international, North American, Chinese mobile, French; not dates, versions, IPs, order numbers', () => {
    for (const t of ['+44 20 7946 0958', '+8613812345678', '415-555-0198', '(415) 555-0198', '13812345678', '138 1234 5678', '01 23 45 67 89']) {
      expect(kinds(`tel ${t} ok`), t).toEqual(['phone']);
    }
    for (const t of ['2026-12-01 10:22:01', 'v10.8.2', '192.168.10.254', 'order 1029384756', 'ts 1764662400123', '+1', 'x = 3 + 12345', '1.2.3.4567', 'ISBN 978-3-16-148410-0']) {
      expect(kinds(t), t).toEqual([]);
    }
  });

  it('card: Luhn and issuer length; not barcodes, tracking numbers or timestamps', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
    expect(kinds('amex 3782-822463-10005')).toEqual(['card']);
    expect(kinds('4111 1111 1111 1112')).toEqual([]); // Luhn fails
    expect(kinds('4111 11111 111 1111')).toEqual([]); // not a card's grouping
    expect(kinds('EAN 6901234567892')).toEqual([]); // 13 digits starting with 6
    expect(kinds('1764662400123456789')).toEqual([]); // nanosecond timestamp
    expect(kinds('0000000000000000')).toEqual([]);
  });

  it('IBAN: mod-97 and the country length', () => {
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('GB82WEST12345698765433')).toBe(false);
    expect(ibanValid('GB82WEST1234569876543')).toBe(false); // GB is 22 long
    expect(kinds('pay to GB82 WEST 1234 5698 7654 32')).toEqual(['iban']);
    expect(kinds('ref XX82WEST12345698765432')).toEqual([]);
  });

  it('China resident ID: check digit, province and a real birth date', () => {
    expect(cnIdValid('11010519491231002X')).toBe(true);
    expect(cnIdValid('110105194912310021')).toBe(false); // check digit
    expect(cnIdValid('11010519490230002X')).toBe(false); // 30 February
    expect(kinds('申请人 11010519491231002x 已核验')).toEqual(['cn_id']);
    expect(kinds('991234199001011234')).toEqual([]); // no province 99
  });

  it('flag and refuse report without changing the text; offsets are UTF-8 bytes', () => {
    const text = '联系：jane@example.org';
    const r = scanPii(text, ALL, 'flag');
    expect(r.text).toBe(text);
    expect(r.findings).toEqual([{ kind: 'email', action: 'flag', count: 1, offsets: [[9, 25]] }]);
    expect(scanPii(text, ALL, 'refuse').findings[0]?.action).toBe('refuse');
  });

  it('returns on hostile input', () => {
    for (const t of ['a@a.a@'.repeat(180_000), 'a.'.repeat(500_000) + '@', '4'.repeat(1 << 20), '4 '.repeat(500_000), '+1 '.repeat(300_000), ('+' + '1'.repeat(20)).repeat(50_000), 'DE89 '.repeat(200_000), '\ufffd'.repeat(1 << 20)]) {
      expect(typeof redact(t).text).toBe('string');
    }
  });
});
