// Every state "next" must visit, in order: each slide, then each of its fragments. (tests/test_slides.py)
() => {
  const steps = [];
  document.querySelectorAll('.reveal .slides > section').forEach((column, h) => {
    column.querySelectorAll(':scope > section').forEach((slide, v) => {
      steps.push([h, v, -1]);
      const indices = new Set([...slide.querySelectorAll('.fragment')]
        .filter(f => !f.closest('aside')).map(f => f.dataset.fragmentIndex));
      for (let f = 0; f < indices.size; f++) steps.push([h, v, f]);
    });
  });
  return steps;
}
