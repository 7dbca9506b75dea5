// S6's request body: one long, legitimate English message as a site's backend would pass it to
// POST /v1/classifier, with every input that turns a block on (docs/classifier.md): the text, an
// e-mail address (syntax, disposable and free-provider lists, MX), an IP address (ASN, threat
// lists, location), a time zone, the expected languages and countries, and a User-Agent (device).
// The account holds bench/lib/keys.ts's training examples, so SIMILARITY runs too. The text was
// written for the bench: a customer's message to a shop-software vendor, sixteen paragraphs (the last a postscript), two links,
// a few prices and figures, no spam vocabulary, so it classifies GOOD and every rule runs to the end.

const PARAGRAPHS = [
  'Hello Support Team, my name is Margaret Ellison and I run a small online shop selling hand-made ceramics from our studio in ' +
  'Bristol. We have been using your platform for a little over three years now, and on the whole we are very happy with it. ' +
  'I am writing because we are planning a fairly large change to the way we sell, and before we commit to anything I would like ' +
  'to understand what your software can and cannot do for us. I apologise in advance for the length of this message; I have tried ' +
  'to put everything in one place so that whoever picks it up does not have to come back to me with lots of small questions. ' +
  'I have numbered nothing, but each paragraph covers one topic, so feel free to forward parts of it to different colleagues.',
  'First, some background. At the moment we have about 240 products in the catalogue, most of them one-off pieces, plus a range of ' +
  'about forty standard items (mugs, bowls, small vases) that we make in batches. Orders come in through the shop, through a market ' +
  'stall we run on Saturdays, and occasionally by phone from trade customers. The trade customers are the reason for this message: ' +
  'over the last year they have grown from a handful of cafes to around thirty independent shops and restaurants across the south ' +
  'west, and handling their orders by e-mail and spreadsheet has become the part of the week everybody dreads. We would like them ' +
  'to be able to log in, see trade prices, and place repeat orders themselves.',
  'I read the page about wholesale accounts on your help centre (https://help.example-shop.com/articles/wholesale-pricing) and it ' +
  'seems to cover most of what we need, but a few things were not clear to me. Can a trade customer see different prices from a ' +
  'retail customer for the same product, without us having to duplicate the product? Can we set a minimum order value for trade ' +
  'accounts only, for example a minimum of 150 pounds before delivery is free? And can we approve new trade accounts by hand before ' +
  'they are allowed to see the trade prices? We have had people sign up pretending to be a shop in the past, and we would rather ' +
  'check each one ourselves, even if it means a short delay for genuine customers.',
  'Second, invoices. Our trade customers pay on thirty-day terms, not at checkout. At the moment we raise the invoices in our ' +
  'accounting package and send them by hand. Ideally an order placed by a trade account would not take a card payment at all, ' +
  'would be marked as awaiting payment, and would create the invoice automatically in the accounting package, with the right VAT ' +
  'treatment for each line. I understand from the forum that there is an integration with the accounting package we use, but the ' +
  'posts I found were from two years ago and mentioned problems with partial payments and credit notes. Have those been fixed? If ' +
  'not, is there a recommended way of working around them that other customers use?',
  'Third, stock. Because many of our pieces are unique, stock levels matter a great deal to us. Last December we sold the same vase ' +
  'twice within a few minutes, once at the market stall through the card reader and once online, and had to apologise to a very ' +
  'disappointed customer who had bought it as a Christmas present. I believe this happened because the card reader app synchronises ' +
  'stock only every fifteen minutes. Is that still the case, and is there a setting that makes it synchronise immediately, even if ' +
  'that uses more mobile data at the stall? We have a reasonable signal at the market most weeks, so that should not be a problem.',
  'Fourth, shipping. We ship fragile goods, so our packaging is bulky and the carriers charge by volume rather than weight. Your ' +
  'shipping rules seem to be based on weight and order value only. Is there a way to base the charge on the number of items, or ' +
  'on a size band that we assign to each product? A large platter and a small espresso cup weigh almost the same once they are ' +
  'wrapped, but the boxes they need are very different. At present we overcharge for small orders and lose money on large ones, ' +
  'which is not fair to anybody, and several customers have mentioned it in their reviews.',
  'Fifth, the move itself. If we go ahead, we would like to switch over in January, which is our quietest month. We would need to ' +
  'import the trade customers (names, addresses, VAT numbers, agreed discounts) from a spreadsheet, and keep the order history of ' +
  'the retail customers we already have. Is there an import tool for customer accounts, or would you do it for us? I noticed on ' +
  'the pricing page (https://www.example-shop.com/pricing) that the next plan up includes a migration service. Does that include ' +
  'customer accounts, and how long does it usually take? We could send a sample of the spreadsheet in advance so you can check it.',
  'Sixth, costs. We currently pay 39 pounds a month. The plan that includes trade accounts is listed at 89 pounds a month, which is ' +
  'a big step for a business of our size, although it would still be cheaper than the hours we spend on trade orders today. Is ' +
  'there an annual price, and is there any discount for small businesses or for customers who have been with you for several ' +
  'years? I would also like to know whether we can move back to the cheaper plan later without losing the trade accounts and their ' +
  'history, in case the trade side of the business does not grow as we hope it will.',
  'Seventh, a smaller question that has been bothering us for a while. Our order confirmation e-mails sometimes land in spam folders, ' +
  'especially for customers who use work addresses. Our web designer thinks it may be because the e-mails are sent from your servers ' +
  'but show our domain as the sender. She mentioned something about adding records to our domain settings. Is there a guide for ' +
  'this, and is it something we can do ourselves, or should we ask her to do it? We are not very technical, so a step-by-step guide ' +
  'with screenshots would be ideal.',
  'Eighth, returns. Trade customers occasionally receive a piece that was damaged in transit, and at the moment we deal with that by ' +
  'sending a replacement and adjusting the next invoice by hand. Retail customers can already request a return through the shop, ' +
  'which works well. Could the same return form be offered to trade accounts, with the refund going onto their account as a credit ' +
  'against the next invoice rather than back to a card? We would also like to ask for a photograph of the damage before we approve a ' +
  'return, because the carrier asks us for one when we make a claim, and chasing customers for photos weeks later rarely works.',
  'Ninth, reporting. Our accountant has asked whether we can see sales split between trade and retail each month, and between the ' +
  'shop, the market stall and phone orders. At the moment I export every order to a spreadsheet and sort them by hand, which takes ' +
  'most of a morning at the end of each month. Are the standard reports able to filter by customer group and by sales channel, and ' +
  'can they be scheduled and sent to her by e-mail automatically? If the standard reports cannot do it, is there a way to build a ' +
  'custom report without paying a developer, for example by saving a filtered view of the orders list?',
  'Tenth, gift vouchers. Before Christmas many of our retail customers buy vouchers, and a few of the cafes have asked whether they ' +
  'could sell our vouchers at their counters as well. I assume the cafes would buy the vouchers from us at a trade discount and sell ' +
  'them at face value. Does your voucher feature allow a batch of codes to be created for one trade account, with an expiry date of ' +
  'twelve months, and does it show us later which of those codes have been used and where? We would not want vouchers sold by one ' +
  'cafe to be redeemed twice, once online and once at the market stall.',
  'Eleventh, staff access. Two part-time assistants help with packing and with the market stall. They need to see orders and update ' +
  'stock, but they should not be able to see trade prices, change payment settings or export customer data. I could not find out ' +
  'from the documentation whether staff accounts can be limited in that way, or whether every staff account has full access to the ' +
  'admin area. If it is possible, could you point me to the right settings page? If it is only available on a higher plan, please ' +
  'tell me which one, so that I can include it when I compare the costs with our accountant next month.',
  'Twelfth, and last before I let you go: a growing number of orders now come from customers in Ireland, France and the ' +
  'Netherlands, mostly people who found us at a craft fair or through a magazine feature last spring. Since the rules on selling to ' +
  'customers in the European Union changed, we have not been confident that we charge the right VAT on those orders, and two parcels ' +
  'were held at customs for several weeks because the paperwork was incomplete. Does your platform work out the VAT for each ' +
  'country and produce the customs declaration, or do we need a separate service for that? And would it be possible to show the ' +
  'shop in French as well as in English without paying for a second subscription?',
  'Finally, I would be grateful if someone could call me to talk this through, as I think a twenty-minute conversation would answer ' +
  'most of these questions faster than a long exchange of e-mails. I am usually in the studio on Tuesdays and Thursdays between nine ' +
  'and four, and the best number is the one on our account. If a call is not possible, a written reply is of course fine too, and I ' +
  'am happy to wait a few days for a complete answer rather than receive a quick partial one. Thank you very much for your time, ' +
  'and thank you for a product that has served us well so far. Kind regards, Margaret Ellison, Ellison Ceramics, Bristol.',
  'P.S. Our shop address on the account is still the old unit on the trading estate; we moved to the studio in the spring. I have ' +
  'changed it on the invoices, but I could not find where to change it on the account itself, so please update it if you can.',
];

/** 9,911 characters of ASCII text (the body is 10,243 bytes): the paragraphs, a blank line between each. */
export const S6_TEXT = PARAGRAPHS.join('\n\n');

/** The e-mail address's domain: the runner's DNS server on loopback answers its MX query. */
export const S6_EMAIL_DOMAIN = 'ellison-ceramics.co.uk';

/**
 * The whole body. ipAddress is a fixed public address (a UK broadband range, so that the embedded
 * geolocation finds a country); expectedCountries names the EU list plus GB, so no country rule
 * fires but every one runs.
 */
export const S6_BODY = JSON.stringify({
  text: S6_TEXT,
  email: `margaret@${S6_EMAIL_DOMAIN}`,
  ipAddress: '81.2.69.160',
  timeZone: 'Europe/London',
  expectedLanguages: ['en'],
  expectedCountries: ['GB', 'list:eu'],
  userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
});
