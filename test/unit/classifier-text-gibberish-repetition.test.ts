// GIBBERISH: random-letter words, told apart from real words of any Latin-script language (German
// compounds, Polish names) by letter trigrams that occur in no such language; codes with digits
// and links are never gibberish. REPETITION: runs of one character, a word twice in a row,
// repeated three-word sequences.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ruleScore } from '../helpers/classifier-text.js';

test('GIBBERISH: keyboard mashes and random strings; 4 × min(1, 2 × their share of the words)', () => {
  assert.equal(ruleScore('GIBBERISH', 'sdkfjhsdkjfh'), 4);
  assert.equal(ruleScore('GIBBERISH', 'xkqzjwvb lkjhgfdsa'), 4);
  assert.equal(ruleScore('GIBBERISH', 'Hello, my name is xkqzjwvbnm and I have a question about my order.'), 0.62); // 1 of 13 words
  assert.equal(ruleScore('GIBBERISH', 'aBcDeFgHiJ'), 4); // case flipping inside a word
  assert.equal(ruleScore('GIBBERISH', 'Hi, my code is wbvtrnqp here'), 1.33); // 1 of 6
});

test('GIBBERISH: real words, names, compounds, identifiers, codes and links score 0', () => {
  for (const text of [
    'Rechtsschutzversicherung Angstschweiß Zusammenarbeit Donaudampfschifffahrtsgesellschaft',
    'Przybyszewski Wojciechowski Szczepański Kowalczyk Tchaikovsky Llewellyn Nguyen Björkström',
    'incomprehensibilities strengths rhythms Zwijndrecht Oosterhout Gijsbrechts',
    'getElementById addEventListener PostgreSQL JavaScript iPhone McDonald MsgChange',
    'order 88231-AX, ticket QX7-99Z12, invoice INV2024XKQZ, tracking 1Z999AA10123456784',
    'https://example.com/xkqzjwvbnmqw/sdkfjhsdkjfh?token=kdjfghdkjfgh',
    'Привет, как дела? Всё хорошо, спасибо. 你好，谢谢。こんにちは',
    'Qingdao Xiaoping Zhengzhou Aaltonen Yevgeny Mbappé',
  ]) assert.equal(ruleScore('GIBBERISH', text), 0, text);
});

test('REPETITION: character runs, a word twice in a row, repeated three-word sequences', () => {
  assert.equal(ruleScore('REPETITION', 'Thanks for the quick answer, it works now.'), 0);
  assert.equal(ruleScore('REPETITION', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 1.5); // a run of 40: ramp(40, 9, 40) = 1
  assert.equal(ruleScore('REPETITION', 'hello zzzzzzzzzzzzzzzzzzzzzzzz'), 0.73); // 24: 1.5 × 15/31
  assert.equal(ruleScore('REPETITION', '💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰💰 money'), 0.77); // 25 emoji: 1.5 × 16/31
  assert.equal(ruleScore('REPETITION', 'soooo good, yesss, ------------------ and ============== lines'), 0); // separators are no runs
  assert.equal(ruleScore('REPETITION', 'buy buy buy buy buy now'), 0.75); // 4 repeats after an allowance of 1: 1.5 × 3/6
  assert.equal(ruleScore('REPETITION', 'that that is is fine'), 0.25); // 2 repeats: 1.5 × 1/6
  const copied = 'Best prices for new cars in your town today. '.repeat(4);
  assert.equal(ruleScore('REPETITION', copied), 1.5); // 3 of 4 copies repeat: 26 of 34 trigrams
  assert.equal(ruleScore('REPETITION', 'order 0000000000 and 1111111111'), 0.35); // two runs of 10: 1.5 × (1/31 + 0.2)
});
