# `panel serve reviewer` runs this file as a script (not as a package module): keep it a shim.
from layouts import create_app

create_app().servable(title="SpecReview")
