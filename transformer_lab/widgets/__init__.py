"""可交互图的引擎：模型 (``explorable``)，以及同一张图的两种滑块——有内核的 ``live``、没有内核的 ``static``。"""

from .explorable import Explorable, Slider, View

__all__ = ["Explorable", "Slider", "View"]
