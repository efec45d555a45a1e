import { expect } from 'chai';
import { SafeHtml, escapeHtml, html } from '../../shared/sign-in/html.js';

describe('HTML escaping of the sign-in pages', () => {
  it('escapes the characters that matter in text and in quoted attributes', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y' \`z\``)).to.equal(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39; &#96;z&#96;',
    );
  });

  it('escapes every interpolated value of the template, in text and attributes', () => {
    const name = '"><img src=x onerror=alert(1)>';
    const out = html`<p title="${name}">${name}</p>`.value;
    expect(out).to.equal('<p title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</p>');
    expect(out).to.not.include('<img');
  });

  it('does not escape markup made by the template itself (nesting), and escapes strings inside it', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(inner).to.be.instanceOf(SafeHtml);
    expect(html`<p>${inner}</p>`.value).to.equal('<p><b>&lt;i&gt;</b></p>');
  });

  it('renders arrays item by item, numbers as text, and false, null and undefined as nothing', () => {
    expect(html`<ul>${['<a>', html`<li>ok</li>`]}</ul>`.value).to.equal('<ul>&lt;a&gt;<li>ok</li></ul>');
    expect(html`${1}|${false}|${null}|${undefined}|${true}`.value).to.equal('1||||true');
  });

  it('cannot be fooled by an object that merely looks like SafeHtml', () => {
    const fake = { value: '<script>' } as unknown as string;
    expect(html`${fake}`.value).to.equal('[object Object]');
  });
});
