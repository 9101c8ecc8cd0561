// Starts Swagger UI on /docs from local files (no CDN, no inline script).
window.addEventListener("DOMContentLoaded", function () {
  window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
});
