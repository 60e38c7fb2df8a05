// Only improves: the copy buttons (the short link is also shown as text and a link).
document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
  if (!navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener("click", function () {
    navigator.clipboard.writeText(button.dataset.copy).then(function () {
      button.textContent = "Copied";
    });
  });
});
