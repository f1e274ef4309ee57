// SPDX-License-Identifier: Apache-2.0
// Starts Swagger UI on the OpenAPI document named by the page's #swagger-ui element. It is a file
// rather than an inline script so that the page's Content-Security-Policy can forbid inline code.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    // The default validator badge loads an image from a third-party host.
    validatorUrl: null,
  });
})();
