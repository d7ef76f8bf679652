/** loopd's name and mark for /docs (Swagger UI), in place of the framework's logo: light on Swagger UI's dark top bar. */
export const LOOPD_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="132" height="40" viewBox="0 0 132 40" role="img" aria-label="loopd">
  <circle cx="20" cy="20" r="13" fill="none" stroke="#7dd3fc" stroke-width="5"/>
  <path d="M20 7a13 13 0 0 1 13 13" fill="none" stroke="#f8fafc" stroke-width="5" stroke-linecap="round"/>
  <text x="42" y="29" font-family="ui-sans-serif, system-ui, sans-serif" font-size="26" font-weight="700" fill="#f8fafc">loopd</text>
</svg>`;

/** The mark alone, dark on a browser tab's light background. */
export const LOOPD_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 40 40">
  <circle cx="20" cy="20" r="13" fill="none" stroke="#0284c7" stroke-width="6"/>
  <path d="M20 7a13 13 0 0 1 13 13" fill="none" stroke="#0f172a" stroke-width="6" stroke-linecap="round"/>
</svg>`;
