"""Card identity from a rectified card crop: a classical gallery (no network, no training run).

A deck is enrolled from one reference image per card (plus generated augmentations) into a
small :class:`Gallery` that identifies crops with numpy and OpenCV only. See
:mod:`vision.cards.identify`.
"""

from vision.cards.identify import (BACK_ID, CROP_SIZE, CardMatch, Gallery, GalleryError,
                                   art_angle_deg, card_corners_mm, enroll, features,
                                   half_turn_symmetric, order_card_corners, warp_card,
                                   warp_card_mm)

__all__ = ["BACK_ID", "CROP_SIZE", "CardMatch", "Gallery", "GalleryError", "art_angle_deg",
           "card_corners_mm", "enroll", "features", "half_turn_symmetric", "order_card_corners",
           "warp_card", "warp_card_mm"]
