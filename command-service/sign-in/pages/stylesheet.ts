// The pages' one stylesheet, served from our origin (the policy allows no inline style).
export const SIGN_IN_STYLESHEET = `
body { font-family: system-ui, sans-serif; line-height: 1.5; margin: 0; color: #1b1b1b; background: #f6f6f4; }
header { background: #1f3a5f; color: #fff; padding: 0.5rem 1rem; }
header .service { margin: 0; font-weight: 600; }
main { max-width: 32rem; margin: 2rem auto; padding: 0 1rem; }
label { display: block; font-weight: 600; }
.hint { display: block; color: #4a4a4a; }
input[type=email], input[type=password], input[type=text] { width: 100%; box-sizing: border-box; padding: 0.5rem; font-size: 1rem; border: 1px solid #6b6b6b; border-radius: 4px; }
input[aria-invalid=true] { border: 2px solid #b00020; }
button { font-size: 1rem; padding: 0.5rem 1rem; border-radius: 4px; border: 1px solid #1f3a5f; background: #1f3a5f; color: #fff; cursor: pointer; }
button[value=deny] { background: #fff; color: #1f3a5f; }
:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
.error { color: #b00020; font-weight: 600; }
.scope { color: #4a4a4a; font-size: 0.9em; }
.codes code, #totp-secret { font-size: 1.1rem; letter-spacing: 0.05em; }
`;
