// Text a guest reads beside the service's own link (their name, who invited them) must not carry a
// link of its own: mail clients and SMS apps turn URLs, bare domains and addresses into links, so
// anyone allowed to create passes could otherwise send a phishing link from the service's sender.
// Names are still free: "St.John", "J.R.R. Tolkien", "O'Brien", "Zoë" pass; what a linkifier would
// pick up (a scheme, www., an address, a known top-level domain, a domain with a path) does not.

// Dots that linkifiers treat as dots (ideographic and full-width full stops), after NFKC.
const DOT_LIKE = /[\u3002\uff0e\uff61]/g;
const SCHEME = /\b[a-z][a-z0-9+.-]{0,30}:\/\//i;
const SCHEME_WITHOUT_SLASHES = /\b(?:https?|ftp|mailto|tel|sms|javascript|data|file|intent|market|callto|skype|whatsapp):/i;
const WWW = /\bwww\d{0,3}\./i;
const ADDRESS = /[^\s@]@[^\s@]+\.[^\s@]{2,}/;
const DOMAIN_WITH_PATH = /[\p{L}\p{N}-]\.[\p{L}]{2,63}[/?#:]/u;
// Top-level domains that linkifiers know, and that no one's name ends a word with.
const KNOWN_TLD =
  /[\p{L}\p{N}-]\.(?:com|net|org|info|biz|io|co|app|dev|xyz|online|site|top|click|link|live|shop|store|me|ly|gl|gd|to|tk|ml|ga|cf|gq|ru|cn|uk|de|fr|nl|eu|us|ca|au|in|br|jp|kr|es|it|pl|se|ch|be|at|cz|pt|ua|tv|cc|ws|su|ir|tr|vn|id|example|invalid|test|local|zip|mov)(?![\p{L}\p{N}])/iu;

const RULES = [SCHEME, SCHEME_WITHOUT_SLASHES, WWW, ADDRESS, DOMAIN_WITH_PATH, KNOWN_TLD];

/** True when a mail client or an SMS app could make a link of some part of `text`. */
export function carriesLink(text: string): boolean {
  const normalized = text.normalize('NFKC').replace(DOT_LIKE, '.');
  return RULES.some((rule) => rule.test(normalized));
}
