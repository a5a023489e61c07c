// How many formulas the page has, and how many MathJax rendered, left a preview of, or never reached.
() => {
  const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
  const shown = p => p.textContent.trim() && getComputedStyle(p).display !== 'none';
  return {
    equations: scripts.length,
    rendered: document.querySelectorAll('.MathJax_CHTML').length,
    previews: [...document.querySelectorAll('.MathJax_Preview')].filter(shown).length,
    without: scripts.filter(s => !document.getElementById(s.id + '-Frame')).length,
  };
}
