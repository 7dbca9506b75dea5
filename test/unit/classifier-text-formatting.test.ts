// Formatting rules: capitals, exclamation marks, currency, emoji and hashtags, each graded by how
// strong the signal is, with room for what ordinary messages do (a price, "thanks!!", one emoji).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ruleScore } from '../helpers/classifier-text.js';

test('CAPITALIZATION: share of capitals from 20 cased letters on, 1.5 × ramp(0.4, 0.9)', () => {
  assert.equal(ruleScore('CAPITALIZATION', 'OK THANKS A LOT'), 0); // 12 letters: too short to judge
  assert.equal(ruleScore('CAPITALIZATION', 'PLEASE CALL ME BACK ABOUT MY ORDER'), 1.5);
  assert.equal(ruleScore('CAPITALIZATION', 'Please call me back about my order, I used the PDF form from the USA site.'), 0);
  // 12 capitals of 24 letters: share 0.5 → 1.5 × 0.2
  assert.equal(ruleScore('CAPITALIZATION', 'ABCDEFGHIJKL abcdefghijkl'), 0.3);
  // 18 of 24: 0.75 → 1.5 × 0.7
  assert.equal(ruleScore('CAPITALIZATION', 'ABCDEFGHIJKLMNOPQR abcdef'), 1.05);
  // Links do not count: a shouting URL is no shouting message.
  assert.equal(ruleScore('CAPITALIZATION', 'see HTTPS://EXAMPLE.COM/ABCDEFGHIJKLMNOPQRSTUVWXYZ for details please'), 0);
  // Capitals of other scripts count (Cyrillic, Greek).
  assert.equal(ruleScore('CAPITALIZATION', 'СРОЧНО ПОЗВОНИТЕ МНЕ ПО ПОВОДУ ЗАКАЗА'), 1.5);
});

test('EXCLAMATION: marks beyond 3 plus one per 300 non-space characters, ramp over 9 more', () => {
  assert.equal(ruleScore('EXCLAMATION', 'ok thanks!!'), 0);
  assert.equal(ruleScore('EXCLAMATION', 'Great!!!'), 0);
  assert.equal(ruleScore('EXCLAMATION', 'Buy now!!!!!!'), 0.33); // 6 marks: (6 − 3) / 9
  assert.equal(ruleScore('EXCLAMATION', 'WIN!!!!!!!!!!!!!!!!!!!!'), 1);
  assert.equal(ruleScore('EXCLAMATION', 'Wow！！！！！！'), 0.33); // full-width marks
  assert.equal(ruleScore('EXCLAMATION', 'Hi‼‼‼'), 0.33); // ‼ counts twice
  assert.equal(ruleScore('EXCLAMATION', '¡Hola! ¿Qué tal? ¡Gracias!'), 0); // Spanish ¡ is no exclamation mark
  // A long message may use a few more: 6 marks in 1,200 non-space characters are within its allowance of 7.
  const long = `${'word '.repeat(240)}Thanks! Great! Really! Yes! Sure! Ok!`;
  assert.equal(ruleScore('EXCLAMATION', long), 0);
});

test('CURRENCY: symbols and ISO codes, ramp(2, 10): a price or two scores 0', () => {
  assert.equal(ruleScore('CURRENCY', 'I was charged $49.99 twice, that is $99.98 in total.'), 0);
  assert.equal(ruleScore('CURRENCY', 'Earn $500 $1000 $5000 per week'), 0.13); // 3: (3 − 2) / 8
  assert.equal(ruleScore('CURRENCY', '$$$$$$$$$$ FAST CASH $$$$$$$$$$'), 1);
  assert.equal(ruleScore('CURRENCY', 'Prices: 10 EUR, 12 USD, £9, ¥1000, ₿0.001 and €11'), 0.5); // 6 (codes and symbols)
  assert.equal(ruleScore('CURRENCY', 'euro and dollar prices on request'), 0);
});

test('EMOJI: ramp(3, 15), a flag counts once, skin tones are part of their emoji', () => {
  assert.equal(ruleScore('EMOJI', 'Thanks 🙏 see you 👋'), 0);
  assert.equal(ruleScore('EMOJI', '🔥🔥🔥🔥🔥🔥🔥🔥🔥 hot deal'), 0.5); // 9
  assert.equal(ruleScore('EMOJI', '💰'.repeat(20)), 1);
  assert.equal(ruleScore('EMOJI', '🇩🇪🇫🇷🇪🇸🇮🇹🇵🇹🇳🇱 we ship everywhere'), 0.25); // 6 flags
  assert.equal(ruleScore('EMOJI', '👍🏽👍🏽👍🏽👍🏽👍🏽👍🏽'), 0.25); // 6, the tone modifiers uncounted
  assert.equal(ruleScore('EMOJI', '☀️⭐✅❤️⚡☎️ BMP symbols'), 0.25); // 6 from the Basic Multilingual Plane
  assert.equal(ruleScore('EMOJI', '© 2024 Example™ — arrows ↔ and ‼ are text'), 0);
});

test('HASH_TAGS: "#word" after a space, not "#123", "C#", "&#039;" or a colour', () => {
  assert.equal(ruleScore('HASH_TAGS', 'Order #12345 for C# books, it&#039;s #1'), 0);
  assert.equal(ruleScore('HASH_TAGS', '#love #instagood'), 0);
  assert.equal(ruleScore('HASH_TAGS', '#love #instagood #photooftheday #fashion #beautiful'), 0.5); // 5: (5 − 2) / 6
  assert.equal(ruleScore('HASH_TAGS', 'colours #fff #FF00AA #ff00aa80 #abcd #face #bad #cafe #dad'), 0);
  assert.equal(ruleScore('HASH_TAGS', '#a #b #c #d #e #f #g #h #i #j'), 1);
});
