// Markdown for answers: marked with raw HTML escaped (model output is never trusted as HTML).
import { Marked } from "marked";

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const md = new Marked({ gfm: true, breaks: true });
md.use({
  renderer: {
    html(token: { text: string }) {
      return escape(token.text);
    },
    link(token: any) {
      const href = String(token.href || "");
      const safe = /^(https?:|mailto:|\/|#)/i.test(href) ? href.replace(/"/g, "%22") : "#";
      return `<a href="${safe}" target="_blank" rel="noopener noreferrer">${this.parser.parseInline(token.tokens)}</a>`;
    },
  },
});

export function Markdown({ text }: { text: string }) {
  const html = md.parse(text ?? "", { async: false }) as string;
  return <div className="md" dangerouslySetInnerHTML={{ __html: html }} />;
}
