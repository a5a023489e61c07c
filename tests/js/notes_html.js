// The HTML of every speaker-notes aside of the deck, in order: what reveal.js's notes plugin copies into
// the speaker view's window, where no MathJax runs. (tests/test_slides.py)
() => [...document.querySelectorAll('.reveal .slides aside.notes')].map(aside => aside.innerHTML)
