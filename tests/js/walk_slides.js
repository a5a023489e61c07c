// Walk every slide of a deck with all its fragments shown (maths re-typeset, images decoded) and measure it:
// its size in canvas pixels, and on screen (reveal.js scales the canvas) the font size of every visible
// text, its code blocks, its figures and whatever lies under the controls' corner. (tests/test_slides.py)
async ({minBody, minCode}) => {
  const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const {width, height} = Reveal.getConfig();
  const scale = Reveal.getScale();
  const visible = el => el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const boxes = el => [...el.getClientRects()].filter(r => r.width > 0 && r.height > 0);
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const corner = () => [...document.querySelectorAll('.reveal .controls button, .reveal .slide-number')]
    .filter(visible).flatMap(boxes);
  const slides = [];
  const columns = document.querySelectorAll('.reveal .slides > section');
  for (let h = 0; h < columns.length; h++) {
    const rows = columns[h].querySelectorAll(':scope > section');
    for (let v = 0; v < rows.length; v++) {
      Reveal.slide(h, v, Number.MAX_SAFE_INTEGER);
      await new Promise(ok => MathJax.Hub.Queue(ok));  // the deck re-typesets on slide change
      await frames();
      const slide = Reveal.getCurrentSlide();
      await Promise.all([...slide.querySelectorAll('img')].map(img => img.decode().catch(() => null)));
      await frames();
      const controls = corner();
      const m = {minBody: Infinity, minCode: Infinity, small: [], codeLines: [], underControls: [],
                 figures: []};
      const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
      for (let node; (node = walker.nextNode());) {
        const text = node.textContent.trim();
        const el = node.parentElement;
        const skipped = 'aside.notes, script, style, .MathJax_Preview, .MJX_Assistive_MathML';
        if (!text || el.closest(skipped)) continue;
        if (!visible(el)) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        const rects = boxes(range);
        if (!rects.length) continue;
        // a formula counts at its own size: its sub- and superscripts are smaller by design
        const sized = el.closest('.MathJax_CHTML') || el;
        const px = parseFloat(getComputedStyle(sized).fontSize) * scale;
        const code = !!el.closest('pre, code, .jp-OutputArea-output, .jupyter-widgets');
        if (code) m.minCode = Math.min(m.minCode, px); else m.minBody = Math.min(m.minBody, px);
        if (px < (code ? minCode : minBody) && m.small.length < 5)
          m.small.push(`${code ? 'code' : 'text'} ${px.toFixed(1)} px: ${text.slice(0, 40)}`);
        if (rects.some(r => controls.some(c => meets(r, c))) && m.underControls.length < 5)
          m.underControls.push(text.slice(0, 40));
      }
      // what an image draws: object-fit: contain keeps its aspect ratio, at the left top of its box
      const drawn = img => {
        const box = img.getBoundingClientRect();
        const ratio = img.naturalWidth / img.naturalHeight || box.width / box.height;
        const w = Math.min(box.width, box.height * ratio);
        return {left: box.left, top: box.top, right: box.left + w, bottom: box.top + w / ratio};
      };
      for (const el of slide.querySelectorAll('img, canvas, svg, input, select, button, .widget-slider')) {
        if (el.closest('aside.notes, .MathJax_CHTML') || !visible(el)) continue;
        const rects = el.tagName === 'IMG' ? [drawn(el)] : boxes(el);
        if (rects.some(r => controls.some(c => meets(r, c))) && m.underControls.length < 5)
          m.underControls.push(`<${el.tagName.toLowerCase()}> ${el.className.baseVal ?? el.className}`);
      }
      for (const pre of slide.querySelectorAll('.jp-InputArea-editor pre')) {
        if (pre.closest('aside.notes') || !visible(pre)) continue;
        m.codeLines.push(pre.textContent.replace(/\n+$/, '').split('\n').length);
      }
      for (const img of slide.querySelectorAll('.jp-OutputArea-output img')) {
        if (!visible(img)) continue;
        const box = img.getBoundingClientRect();
        const room = slide.getBoundingClientRect();
        const style = getComputedStyle(slide);
        const inner = room.width - (parseFloat(style.paddingLeft) + parseFloat(style.paddingRight)) * scale;
        // what is drawn: an image with object-fit: contain keeps its aspect ratio in its box
        const ratio = img.naturalWidth / img.naturalHeight;
        const drawn = Math.min(box.width, box.height * ratio);
        m.figures.push({drawnWidth: drawn, drawnHeight: drawn / ratio, room: inner,
                        maxHeight: parseFloat(getComputedStyle(img).maxHeight) * scale || Infinity,
                        inWidget: !!img.closest('.jupyter-widgets')});
      }
      const text = slide.innerText.trim().slice(0, 50);
      slides.push({size: [slide.scrollWidth, slide.scrollHeight], text, ...m});
    }
  }
  Reveal.slide(0, 0, -1);
  const canvas = document.querySelector('.reveal .slides').getBoundingClientRect();
  const fits = canvas.left >= 0 && canvas.top >= 0
    && canvas.right <= innerWidth && canvas.bottom <= innerHeight;
  return {width, height, scale, slides, fits};
}
