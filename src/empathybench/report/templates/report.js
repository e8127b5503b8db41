function openTarget(){var id=decodeURIComponent(location.hash.slice(1));if(!id)return;
var el=document.getElementById(id);while(el){if(el.tagName==='DETAILS'){el.open=true;}el=el.parentElement;}
var t=document.getElementById(id);if(t&&t.scrollIntoView){t.scrollIntoView();}}
window.addEventListener('hashchange',openTarget);window.addEventListener('DOMContentLoaded',openTarget);
