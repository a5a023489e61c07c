// The typeset formulas on each slide (speaker notes left out), in deck order. (tests/test_slides.py)
() => [...document.querySelectorAll('.reveal .slides > section > section')].map(
  slide => [...slide.querySelectorAll('.MathJax_CHTML')].filter(m => !m.closest('aside')).length)
